"""Node effects: an external effect a LangGraph node (or a tool it calls) must cause once, staged
inside the node and committed as an intent with that task's writes under the thread's fence, then
delivered by the fenced dispatcher under a key that names the task::

    effect key = digest(thread scope, checkpoint namespace, task id, the node's own key)

LangGraph derives a task id from the checkpoint its step ran from, so the task run again after a
crash, or resumed from that checkpoint, stages the same key, and a key that exists already is
absorbed rather than delivered twice. The saver commits (saver.py); this module is what a node
calls, and where staged effects wait for their commit (``StagedEffects``), as in the TypeScript
saver's node-effects.ts and staged-effects.ts.
"""

import asyncio
import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Protocol, Union, cast

from langchain_core.runnables import RunnableConfig

from ..errors import InvalidRequestError
from ..models import Intent

#: LangGraph puts the running task's checkpointer and id into each node's config under these.
_CHECKPOINTER_KEY = "__pregel_checkpointer"
_TASK_ID_KEY = "__pregel_task_id"
_CHECKPOINT_MAP_KEY = "checkpoint_map"
_TARGET = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_MAX_KEY_LENGTH = 1024
#: The most effects one task may stage: they commit together, in one commit.
MAX_EFFECTS_PER_TASK = 16
_POLL_S = 0.025

#: Who writes: a run's own fence, or "lease" for a run under the saver's lease.
WriterKey = Union[int, str]


@dataclass(frozen=True)
class StagedNodeEffect:
    thread_id: str
    task_id: str
    #: The task's checkpoint namespace, as the node's config names it.
    namespace: str
    #: The checkpoint the task's step ran from.
    origin: str
    key: str
    target: str
    payload: Any


class NodeEffectStager(Protocol):
    def stage_node_effect(self, config: RunnableConfig, effect: StagedNodeEffect) -> str: ...

    def effect_intent(self, effect_key: str) -> Optional[Mapping[str, Any]]: ...

    async def aeffect_intent(self, effect_key: str) -> Optional[Mapping[str, Any]]: ...


def stage_effect(config: RunnableConfig, key: str, target: str, payload: Any) -> str:
    """Stages an effect of the running node: committed with the task's writes (under durability
    ``exit``, with the run's checkpoint), dropped when the task ends in an error or an interrupt,
    refused with the writes of a superseded run. Returns the effect key ``await_effect`` reads
    the outcome by. Call it inside a node or tool, with the node's config."""
    stager = _stager_of(config, "stage_effect")
    return stager.stage_node_effect(config, _node_effect(config, key, target, payload))


def await_effect(config: RunnableConfig, effect_key: str, timeout_ms: int = 0) -> Dict[str, Any]:
    """The outcome of an effect: ``{"status": "delivered", "provider_ref": …}``, ``{"status":
    "failed" | "needs_attention" | "cancelled", "error": …}``, or ``{"status": "pending"}`` once
    ``timeout_ms`` passed first (default 0: one read)."""
    stager = _stager_of(config, "await_effect")
    until = time.monotonic() + timeout_ms / 1000
    while True:
        outcome = _final(effect_key, stager.effect_intent(effect_key))
        if outcome is not None:
            return outcome
        if time.monotonic() >= until:
            return {"effect_key": effect_key, "status": "pending"}
        time.sleep(min(_POLL_S, max(0.0, until - time.monotonic())))


async def aawait_effect(
    config: RunnableConfig, effect_key: str, timeout_ms: int = 0
) -> Dict[str, Any]:
    """``await_effect`` for an asynchronous node (the saver needs an ``aclient``)."""
    stager = _stager_of(config, "aawait_effect")
    until = time.monotonic() + timeout_ms / 1000
    while True:
        outcome = _final(effect_key, await stager.aeffect_intent(effect_key))
        if outcome is not None:
            return outcome
        if time.monotonic() >= until:
            return {"effect_key": effect_key, "status": "pending"}
        await asyncio.sleep(min(_POLL_S, max(0.0, until - time.monotonic())))


def node_intent(scope: str, effect: StagedNodeEffect) -> Intent:
    """The intent a staged effect commits as; its key is the TypeScript saver's for the same
    task and key."""
    text = json.dumps(
        [scope, effect.namespace, effect.task_id, effect.key],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return Intent(f"lg-effect:{digest[:43]}", effect.target, effect.payload)


class StagedEffects:
    """The effects nodes staged and no commit has taken yet, per thread scope, writer and task.
    LangGraph's worker threads stage and commit concurrently: one lock guards the table."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: (scope, writer) → task id → (origin checkpoint, effects by key).
        self._tasks: Dict[Any, Dict[str, Any]] = {}

    def stage(
        self, scope: str, writer: WriterKey, task_id: str, origin: str, intent: Intent
    ) -> bool:
        """Keeps the effect; False (nothing kept) when it would be one too many for its task."""
        with self._lock:
            tasks = self._tasks.setdefault((scope, writer), {})
            entry = tasks.get(task_id)
            if entry is None or entry[0] != origin:
                entry = (origin, {})
                tasks[task_id] = entry
            effects: Dict[str, Intent] = entry[1]
            if intent.effect_key not in effects and len(effects) >= MAX_EFFECTS_PER_TASK:
                return False
            effects[intent.effect_key] = intent
            return True

    def take_task(self, scope: str, writer: WriterKey, task_id: str) -> List[Intent]:
        with self._lock:
            tasks = self._tasks.get((scope, writer), {})
            entry = tasks.pop(task_id, None)
            if not tasks:
                self._tasks.pop((scope, writer), None)
            return [] if entry is None else list(entry[1].values())

    def take_older_than(self, scope: str, writer: WriterKey, checkpoint_id: str) -> List[Intent]:
        """The effects of tasks whose step ran from a checkpoint older than this one (uuid6:
        name order is time order): no writes of theirs were stored (durability ``exit``)."""
        with self._lock:
            tasks = self._tasks.get((scope, writer), {})
            taken: List[Intent] = []
            for task_id in [t for t, (origin, _) in tasks.items() if origin < checkpoint_id]:
                taken.extend(tasks.pop(task_id)[1].values())
            if not tasks:
                self._tasks.pop((scope, writer), None)
            return taken

    def drop_writer(self, scope: str, writer: WriterKey) -> None:
        with self._lock:
            self._tasks.pop((scope, writer), None)


def writer_of(config: RunnableConfig) -> WriterKey:
    fence = (config.get("configurable") or {}).get("fence")
    return fence if isinstance(fence, int) and not isinstance(fence, bool) else "lease"


def _final(effect_key: str, intent: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    status = None if intent is None else intent.get("status")
    if intent is None or status not in ("delivered", "failed", "needs_attention", "cancelled"):
        return None
    if status == "delivered":
        return {
            "effect_key": effect_key,
            "status": status,
            "provider_ref": intent.get("providerRef"),
        }
    return {"effect_key": effect_key, "status": status, "error": intent.get("lastError")}


def _node_effect(config: RunnableConfig, key: str, target: str, payload: Any) -> StagedNodeEffect:
    if not isinstance(key, str) or not 0 < len(key) <= _MAX_KEY_LENGTH:
        raise _refusal("key", f"must be a string of 1 to {_MAX_KEY_LENGTH} characters")
    if not isinstance(target, str) or not _TARGET.match(target):
        raise _refusal("target", "must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")
    try:
        json.dumps(payload)
    except (TypeError, ValueError):
        raise _refusal("payload", "must be a JSON value") from None
    configurable = config.get("configurable") or {}
    task_id = configurable.get(_TASK_ID_KEY)
    namespace = configurable.get("checkpoint_ns") or ""
    thread_id = configurable.get("thread_id")
    if not isinstance(task_id, str) or not isinstance(namespace, str):
        raise _refusal("config", "must be the config LangGraph passed to the running node")
    if thread_id is None:
        raise _refusal("config", "has no configurable.thread_id: run the graph on a thread")
    parent = namespace.rsplit("|", 1)[0] if "|" in namespace else ""
    origin = (configurable.get(_CHECKPOINT_MAP_KEY) or {}).get(parent)
    if not isinstance(origin, str):
        raise _refusal("config", "names no checkpoint its step ran from: pass the node's config")
    return StagedNodeEffect(str(thread_id), task_id, namespace, origin, key, target, payload)


def _stager_of(config: RunnableConfig, name: str) -> NodeEffectStager:
    checkpointer = (config.get("configurable") or {}).get(_CHECKPOINTER_KEY)
    if not callable(getattr(checkpointer, "stage_node_effect", None)):
        raise InvalidRequestError(
            f"{name} needs a graph compiled with a fencegate FencedCheckpointSaver, called "
            "inside a node or tool with that node's config",
            {"field": "config"},
        )
    return cast(NodeEffectStager, checkpointer)


def _refusal(field: str, rule: str) -> InvalidRequestError:
    return InvalidRequestError(f"stage_effect: {field} {rule}", {"field": field})
