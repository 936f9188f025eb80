"""FencedCheckpointSaver: a LangGraph checkpoint saver whose every write is a fenced commit.

A thread is one scope (``scope_for(thread_id)``, as the TypeScript saver names it); its
checkpoints, channel blobs and pending writes are records of that scope (see names.py). A run
writes under the fence of a write ownership it claimed, of ``configurable.fence``, or of a lease
the saver acquires for it; once another run owns the thread, its next write is refused with
:class:`StaleWriteOwnerError` and nothing of it is stored.
"""

import logging
import time
import uuid
from typing import (
    TYPE_CHECKING,
    Any,
    AsyncIterator,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    cast,
)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    copy_checkpoint,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from .._methods import AsyncClientApi, ClientApi
from .._shapes import EitherClientApi, is_async_client
from ..errors import InvalidRequestError, LeaseHeldError, ScopeDeletedError, ScopeNotFoundError
from ..models import Intent
from .batch import ThreadWriteBatch
from .effects import (
    MAX_EFFECTS_PER_TASK,
    StagedEffects,
    StagedNodeEffect,
    WriterKey,
    node_intent,
    writer_of,
)
from .errors import StaleWriteOwnerError
from .leases import HeldLease, ThreadLeases
from .names import DEFAULT_SCOPE_PREFIX, blob_name, checkpoint_name, escape_name, write_name
from .reads import ThreadReader
from .recent import RecentCheckpoints
from .saver_steps import Joined, Pause, SaverSteps, Shared, aiterate, arun, call, iterate, run
from .stored import EMPTY, dump, stored_checkpoint, stored_write, write_index
from .writes import DEFAULT_MAX_WRITES, Batch, RecordToWrite

if TYPE_CHECKING:
    from .owner import WriteOwner

log = logging.getLogger("fencegate.langgraph")

DEFAULT_TTL_MS = 30_000

#: What ``_fence`` answers for a write that must be dropped: the thread was deleted.
_DELETED = -1
#: The writes of a task that ended in an error or an interrupt: its staged effects are dropped.
_FAILED_TASK_CHANNELS = frozenset({"__error__", "__interrupt__"})
#: How often a write carrying effects looks whether its step's checkpoint is stored yet.
_LANDING_POLL_S = 0.02


# LangGraph's own channel versions: whole numbers, one more at each write.
class FencedCheckpointSaver(BaseCheckpointSaver[int]):
    """A ``BaseCheckpointSaver`` over fencegate, synchronous and asynchronous.

    ``client`` is a ``fencegate.Client`` or a ``fencegate.AsyncClient`` (or give both,
    ``client=`` and ``aclient=``) with a **worker** token: the synchronous methods need the
    first, the ``a``-methods the second. ``holder`` (default: an id unique to this saver) holds
    the lease of a run that brings no fence of its own, renewed every third of ``ttl_ms``.
    ``operator_client`` / ``operator_aclient`` delete threads, an operator action (default:
    ``client`` / ``aclient``, which then need an operator token for it). ``policy_version``
    names the policy the saver runs: its leases are acquired (pinning a thread new to the store)
    and taken over under it and its commits are labelled with it; a thread pinned to another
    version is refused ``PolicyMismatchError`` before anything is written.
    """

    def __init__(
        self,
        client: Optional[EitherClientApi] = None,
        holder: Optional[str] = None,
        ttl_ms: int = DEFAULT_TTL_MS,
        *,
        aclient: Optional[AsyncClientApi] = None,
        operator_client: Optional[ClientApi] = None,
        operator_aclient: Optional[AsyncClientApi] = None,
        scope_prefix: str = DEFAULT_SCOPE_PREFIX,
        max_writes: int = DEFAULT_MAX_WRITES,
        serde: Optional[SerializerProtocol] = None,
        policy_version: Optional[str] = None,
    ) -> None:
        super().__init__(serde=serde)
        # ``client`` may be either shape: an AsyncClient given there is the saver's aclient.
        blocking: Optional[ClientApi] = None
        if client is not None and is_async_client(client):
            aclient = aclient or cast(AsyncClientApi, client)
        elif client is not None:
            blocking = cast(ClientApi, client)
        if blocking is None and aclient is None:
            raise InvalidRequestError(
                "FencedCheckpointSaver needs client= (a fencegate.Client) or aclient= "
                "(a fencegate.AsyncClient)",
                {"field": "client"},
            )
        if not isinstance(ttl_ms, int) or ttl_ms < 1:
            raise InvalidRequestError("ttl_ms must be a whole number of milliseconds ≥ 1")
        self.client = blocking
        self.aclient = aclient
        self.operator_client = operator_client or blocking
        self.operator_aclient = operator_aclient or aclient
        self.holder = holder or f"langgraph-saver-{uuid.uuid4().hex[:12]}"
        self.ttl_ms = ttl_ms
        self.scope_prefix = scope_prefix
        self.max_writes = max_writes
        #: The policy version the saver acquires, takes over and commits under (None: none).
        self.policy_version = policy_version
        self._leases = ThreadLeases(blocking, aclient, ttl_ms)
        #: The asynchronous half's writes on one thread go out together (batch.py).
        self._batch = ThreadWriteBatch(max_writes)
        self._recent = RecentCheckpoints()
        self._reader = ThreadReader(self.serde, self.scope_for, self._recent)
        #: Effects nodes staged, until their task's writes (or the run's checkpoint) take them.
        self._effects = StagedEffects()
        #: Checkpoints this saver stored, and the refusals of those it could not: an effect
        #: commits with or after the checkpoint its step ran from.
        self._landed: Dict[str, Optional[BaseException]] = {}

    def scope_for(self, thread_id: str) -> str:
        """The scope of a thread: acquire or take it over to give a run its fence."""
        return self.scope_prefix + escape_name(str(thread_id))

    # Node effects (effects.py)

    def stage_node_effect(self, config: RunnableConfig, effect: StagedNodeEffect) -> str:
        """Keeps a node's effect for its task's writes; returns the effect key."""
        scope = self.scope_for(effect.thread_id)
        intent = node_intent(scope, effect)
        writer = self._writer(config)
        if not self._effects.stage(scope, writer, effect.task_id, effect.origin, intent):
            raise InvalidRequestError(
                f"stage_effect: a task stages at most {MAX_EFFECTS_PER_TASK} effects (they "
                "commit together); stage one effect carrying a list instead",
                {"field": "key"},
            )
        return intent.effect_key

    def effect_intent(self, effect_key: str) -> Optional[Dict[str, Any]]:
        return run(self._client_for("get_tuple"), _get_intent(effect_key))

    async def aeffect_intent(self, effect_key: str) -> Optional[Dict[str, Any]]:
        return await arun(self._client_for("aget_tuple"), _get_intent(effect_key))

    # Reads

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return run(self._client_for("get_tuple"), self._get_tuple(config))

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return await arun(self._client_for("aget_tuple"), self._get_tuple(config))

    def list(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        return iterate(self._client_for("list"), self._list(config, filter, before, limit))

    async def alist(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for item in aiterate(
            self._client_for("alist"), self._list(config, filter, before, limit)
        ):
            yield item

    # Writes

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        steps = self._put(config, checkpoint, metadata, new_versions)
        return run(self._client_for("put"), steps)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        steps = self._put(config, checkpoint, metadata, new_versions)
        return await arun(self._client_for("aput"), steps)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        run(self._client_for("put_writes"), self._put_writes(config, writes, task_id, task_path))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        steps = self._put_writes(config, writes, task_id, task_path)
        await arun(self._client_for("aput_writes"), steps)

    def delete_thread(self, thread_id: str) -> None:
        run(self._operator_client_for("delete_thread"), self._delete_thread(thread_id))

    async def adelete_thread(self, thread_id: str) -> None:
        await arun(self._operator_client_for("adelete_thread"), self._delete_thread(thread_id))

    # Write ownership

    def claim_write_ownership(self, thread_id: str) -> "WriteOwner":
        """Takes the thread: acquires it, or takes it over from a live owner (a worker token
        needs the take-over right for the saver's scope prefix). The returned writer's writes
        are accepted until another claim supersedes it."""
        return run(self._client_for("claim_write_ownership"), self._claim(thread_id))

    async def aclaim_write_ownership(self, thread_id: str) -> "WriteOwner":
        return await arun(self._client_for("aclaim_write_ownership"), self._claim(thread_id))

    def release_thread(self, thread_id: str) -> None:
        """Releases this saver's own lease on a thread; its next write acquires it again."""
        lease = self._leases.held(self.scope_for(thread_id), self.holder)
        if lease is not None:
            run(self._client_for("release_thread"), self._leases.release(lease))

    async def arelease_thread(self, thread_id: str) -> None:
        lease = self._leases.held(self.scope_for(thread_id), self.holder)
        if lease is not None:
            await arun(self._client_for("arelease_thread"), self._leases.release(lease))

    def close(self) -> None:
        """Stops renewing and releases every lease this saver and its writers hold."""
        for lease in self._leases.release_all():
            run(self._client_for("close"), self._leases.release(lease))

    async def aclose(self) -> None:
        for lease in self._leases.release_all():
            await arun(self._client_for("aclose"), self._leases.release(lease))

    def __enter__(self) -> "FencedCheckpointSaver":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> "FencedCheckpointSaver":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # Each operation once, as steps for both kinds of client

    def _get_tuple(self, config: RunnableConfig) -> "SaverSteps[Optional[CheckpointTuple]]":
        thread_id = _thread_of(config)
        if thread_id is None:
            return None
        namespace = _namespace_of(config) or ""
        checkpoint_id = _config_string(config, "checkpoint_id")
        return (yield from self._reader.get_tuple(thread_id, namespace, checkpoint_id))

    def _list(
        self,
        config: Optional[RunnableConfig],
        metadata_filter: Optional[Dict[str, Any]],
        before: Optional[RunnableConfig],
        limit: Optional[int],
    ) -> "SaverSteps[None]":
        config = config or {}
        thread_id = _thread_of(config)
        yield from self._reader.list(
            thread_ids=None if thread_id is None else [thread_id],
            thread_prefix=self.scope_prefix,
            namespace=_namespace_of(config),
            only_id=_config_string(config, "checkpoint_id"),
            before_id=None if before is None else _config_string(before, "checkpoint_id"),
            metadata_filter=metadata_filter,
            limit=limit,
        )

    def _put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> "SaverSteps[RunnableConfig]":
        thread_id = _require_thread(config, "put a checkpoint")
        namespace = _namespace_of(config) or ""
        prepared: Dict[str, Any] = dict(copy_checkpoint(checkpoint))
        values = prepared.pop("channel_values")
        prepared["channel_values"] = {}
        # Only the channels that changed get a blob; the others are read from earlier versions.
        blobs = {
            channel: dump(self.serde, values[channel]) if channel in values else EMPTY
            for channel in new_versions
        }
        records: List[RecordToWrite] = [
            RecordToWrite(
                blob_name(namespace, channel, version), blobs[channel], keep_existing=True
            )
            for channel, version in new_versions.items()
        ]
        stored = stored_checkpoint(
            self.serde,
            namespace,
            prepared,
            get_checkpoint_metadata(config, metadata),
            _config_string(config, "checkpoint_id"),
            [channel for channel in prepared["channel_versions"] if channel not in values],
        )
        records.append(RecordToWrite(checkpoint_name(namespace, checkpoint["id"]), stored))
        purpose = f"put {namespace} {checkpoint['id']}"
        scope = self.scope_for(thread_id)
        # Tasks of earlier steps whose writes were never stored (durability ``exit``) commit
        # their effects with this checkpoint; under the other modes their writes took them.
        intents = self._effects.take_older_than(scope, self._writer(config), checkpoint["id"])
        landing = f"{scope}\0{namespace}\0{checkpoint['id']}"
        try:
            written = yield from self._write(config, thread_id, records, purpose, intents)
        except Exception as error:
            self._landed[landing] = error
            raise
        self._landed[landing] = None
        if len(self._landed) > 512:
            self._landed.pop(next(iter(self._landed)))
        if written:
            versions = prepared["channel_versions"]
            self._recent.remember(scope, stored, versions, blobs)
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def _put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str,
    ) -> "SaverSteps[None]":
        thread_id = _require_thread(config, "put writes")
        checkpoint_id = _config_string(config, "checkpoint_id")
        if checkpoint_id is None:
            raise InvalidRequestError(
                "put_writes needs configurable.checkpoint_id: pass the config put returned",
                {"field": "configurable.checkpoint_id"},
            )
        namespace = _namespace_of(config) or ""
        # A special channel has one fixed slot that the current owner's later write replaces; a
        # regular write keeps the slot it was first stored in, so a repeat is absorbed.
        by_name: Dict[str, RecordToWrite] = {}
        for position, (channel, value) in enumerate(writes):
            index = write_index(channel, position)
            name = write_name(namespace, checkpoint_id, task_id, index)
            value_record = stored_write(self.serde, task_id, channel, task_path, index, value)
            by_name[name] = RecordToWrite(name, value_record, keep_existing=index >= 0)
        scope = self.scope_for(thread_id)
        # A task that failed or was interrupted runs again under the same id and stages again.
        staged = self._effects.take_task(scope, self._writer(config), task_id)
        failed = any(channel in _FAILED_TASK_CHANNELS for channel, _ in writes)
        intents = [] if failed else staged
        if not by_name and not intents:
            return
        if intents:
            yield from self._checkpoint_landed(scope, namespace, checkpoint_id)
        purpose = f"writes {namespace} {checkpoint_id}"
        yield from self._write(config, thread_id, list(by_name.values()), purpose, intents)

    def _checkpoint_landed(
        self, scope: str, namespace: str, checkpoint_id: str
    ) -> "SaverSteps[None]":
        """Waits until the checkpoint a task's step ran from is stored: LangGraph may ask for a
        task's writes before that checkpoint's own write (durability ``async``)."""
        landing = f"{scope}\0{namespace}\0{checkpoint_id}"
        until = time.monotonic() + self.ttl_ms / 1000
        while True:
            if landing in self._landed:
                refusal = self._landed[landing]
                if refusal is not None:
                    raise refusal
                return
            record = yield call("get_record", scope, checkpoint_name(namespace, checkpoint_id))
            if record.exists:
                return
            if time.monotonic() > until:
                raise InvalidRequestError(
                    f"the checkpoint {checkpoint_id} a task's effects come from was never "
                    "stored; an effect commits only with or after the checkpoint its step ran "
                    "from",
                    {"field": "configurable.checkpoint_id"},
                )
            yield Pause(_LANDING_POLL_S)

    def _delete_thread(self, thread_id: str) -> "SaverSteps[None]":
        scope = self.scope_for(thread_id)
        self._leases.forget(scope)
        self._recent.forget(scope)
        try:
            yield call("delete_scope", scope, reason="langgraph delete_thread")
        except (ScopeNotFoundError, ScopeDeletedError):
            return

    def _claim(self, thread_id: str) -> "SaverSteps[WriteOwner]":
        from .owner import WriteOwner  # a subclass of this one

        scope = self.scope_for(thread_id)
        # Each claim holds the thread under a holder of its own, so a second claim supersedes
        # the first even within one saver.
        holder = f"{self.holder}:{uuid.uuid4().hex[:12]}"
        try:
            grant = yield call(
                "acquire", scope, holder, self.ttl_ms, policy_version=self.policy_version
            )
        except (LeaseHeldError, ScopeDeletedError):
            # Held by a live owner, or deleted: a claim takes it over (a deleted thread starts
            # again, as in the TypeScript saver).
            grant = yield call(
                "takeover",
                scope,
                holder,
                ttl_ms=self.ttl_ms,
                policy_version=self.policy_version,
                reason="claim_write_ownership",
            )
        lease = self._leases.hold(scope, holder, grant.fence)
        return WriteOwner(self, thread_id, lease)

    def _write(
        self,
        config: RunnableConfig,
        thread_id: str,
        records: List[RecordToWrite],
        purpose: str,
        intents: Sequence[Intent] = (),
    ) -> "SaverSteps[bool]":
        """Whether the records were written (a late write to a deleted thread is dropped)."""
        scope = self.scope_for(thread_id)
        fence = yield from self._fence(config, scope)
        if fence == _DELETED:
            log.warning("thread %r was deleted: a late write to it is not stored", thread_id)
            return False
        try:
            batch = Batch(thread_id, scope, fence, records, purpose, intents, self.policy_version)
            yield Joined(batch, self._batch)
        except StaleWriteOwnerError:
            # A superseded writer's staged effects are refused with its writes, never handed on.
            self._effects.drop_writer(scope, self._writer(config))
            raise
        return True

    def _writer(self, config: RunnableConfig) -> WriterKey:
        """Whose effects a call carries: the run's own fence, or the saver's lease."""
        return writer_of(config)

    def _fence(self, config: RunnableConfig, scope: str) -> "SaverSteps[int]":
        """The run's own fence when it brings one, else this saver's lease on the thread."""
        given = (config.get("configurable") or {}).get("fence")
        if given is not None:
            if isinstance(given, bool) or not isinstance(given, int) or given < 0:
                raise InvalidRequestError(
                    "configurable.fence must be a whole number ≥ 0 (the fence of a grant)",
                    {"field": "configurable.fence"},
                )
            return given
        held: Optional[HeldLease] = self._leases.held(scope, self.holder)
        if held is not None:
            return held.fence
        # LangGraph's first run of a thread writes its checkpoint and task writes at once: they
        # share one acquire rather than each sending its own.
        acquire = call(
            "acquire", scope, self.holder, self.ttl_ms, policy_version=self.policy_version
        )
        try:
            grant = yield Shared((scope, self.holder), acquire, self._leases.acquiring)
        except ScopeDeletedError:
            # As LangGraph's savers do: a deleted thread is not re-created by a late write.
            return _DELETED
        held = self._leases.held(scope, self.holder)
        if held is not None and held.fence == grant.fence:
            return held.fence  # another write that shared the acquire holds it already
        return self._leases.hold(scope, self.holder, grant.fence).fence

    def _client_for(self, method: str) -> EitherClientApi:
        """The client a method runs on: the AsyncClient for an a-method, else the Client."""
        asynchronous = _is_async_method(method)
        client = self.aclient if asynchronous else self.client
        if client is None:
            has, lacks, argument = (
                ("Client", "AsyncClient", "aclient")
                if asynchronous
                else ("AsyncClient", "Client", "client")
            )
            raise InvalidRequestError(
                f"{method} needs a fencegate.{lacks} and this saver has none: pass {argument}=, "
                f"or call the {'synchronous' if asynchronous else 'a-'} method with the {has} "
                "it has",
                {"field": argument},
            )
        return client

    def _operator_client_for(self, method: str) -> EitherClientApi:
        operator = self.operator_aclient if _is_async_method(method) else self.operator_client
        return operator or self._client_for(method)


#: The methods that come in a synchronous and an asynchronous (``a``-prefixed) form.
_PAIRED = frozenset(
    {
        "get_tuple",
        "list",
        "put",
        "put_writes",
        "delete_thread",
        "claim_write_ownership",
        "check_write_ownership",
        "release_thread",
        "close",
    }
)


def _get_intent(effect_key: str) -> "SaverSteps[Optional[Dict[str, Any]]]":
    intent: Optional[Dict[str, Any]] = yield call("get_intent", effect_key)
    return intent


def _is_async_method(method: str) -> bool:
    return method.startswith("a") and method[1:] in _PAIRED


def _config_string(config: RunnableConfig, key: str) -> Optional[str]:
    """LangGraph ids are strings, though a caller may pass a number; anything else is refused."""
    value = (config.get("configurable") or {}).get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidRequestError(
        f"configurable.{key} must be a string, got {type(value).__name__}",
        {"field": f"configurable.{key}"},
    )


def _thread_of(config: RunnableConfig) -> Optional[str]:
    return _config_string(config, "thread_id")


def _namespace_of(config: RunnableConfig) -> Optional[str]:
    return _config_string(config, "checkpoint_ns")


def _require_thread(config: RunnableConfig, action: str) -> str:
    thread_id = _thread_of(config)
    if thread_id is None:
        raise InvalidRequestError(
            f"cannot {action}: configurable.thread_id is missing; pass "
            '{"configurable": {"thread_id": ...}}',
            {"field": "configurable.thread_id"},
        )
    return thread_id
