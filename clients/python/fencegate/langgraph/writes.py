"""Writes a set of records under one fence, in as few commits as the store's write limit allows.

The saver is the only writer of its thread while its fence is current, so it expects the
revisions it last saw (0 for a new checkpoint or blob); when the store says otherwise it reads
those records again and retries with what it read. A refusal that says another run owns the
thread raises :class:`StaleWriteOwnerError`; every other refusal its catalog error.
"""

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .._answers import catalog_error
from .._base import FencegateError
from ..models import CommitResult, Intent, Write
from .errors import STALE_OWNER_CODES, StaleWriteOwnerError
from .saver_steps import SaverSteps, call

#: The store's default limit of writes per commit.
DEFAULT_MAX_WRITES = 64
#: Revision conflicts resolved by reading again; more would mean another writer.
_MAX_REREADS = 3


@dataclass(frozen=True)
class RecordToWrite:
    name: str
    value: Any
    #: Leave a record that exists already as it is (content-addressed data such as blobs).
    keep_existing: bool = False


@dataclass(frozen=True)
class Batch:
    thread_id: str
    scope: str
    fence: int
    #: Written in order; the last record lands in the last commit, once all it points to has.
    records: Sequence[RecordToWrite]
    #: What the operationIds are derived from, with the fence and the content.
    purpose: str
    #: Effects nodes staged (effects.py), committed with the last commit of the batch.
    intents: Sequence[Intent] = ()
    #: The version the commits are made under (the saver's), labelling them in the audit log.
    policy_version: Optional[str] = None


def write_records(batch: Batch, max_writes: int = DEFAULT_MAX_WRITES) -> "SaverSteps[None]":
    records = list(batch.records)
    chunks: List[List[RecordToWrite]] = []
    end = len(records)
    while end > 0:
        chunks.insert(0, records[max(0, end - max_writes) : end])
        end -= max_writes
    if not chunks:
        chunks.append([])
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        yield from _write_chunk(batch, chunk, index, list(batch.intents) if last else [])


def _write_chunk(
    batch: Batch, chunk: List[RecordToWrite], index: int, intents: List[Intent]
) -> "SaverSteps[None]":
    known: Dict[str, Tuple[int, bool]] = {}
    attempt = 0
    while True:
        writes = []
        for record in chunk:
            revision, exists = known.get(record.name, (0, False))
            if record.keep_existing and exists:
                continue
            writes.append(Write(record.name, expect_revision=revision, value=record.value))
        if not writes and not intents:
            return
        result: CommitResult = yield call(
            "commit",
            scope=batch.scope,
            fence=batch.fence,
            operation_id=operation_id(batch, index, writes, intents),
            writes=writes,
            intents=intents,
            policy_version=batch.policy_version,
        )
        if result.committed:
            return
        assert result.error is not None
        code = result.error.code
        repeated = (result.error.details or {}).get("effectKey")
        if code == "duplicate_effect" and any(i.effect_key == repeated for i in intents):
            # The same task's effect, committed by an earlier attempt of its step: it exists once
            # already, so it is absorbed, not refused.
            intents = [intent for intent in intents if intent.effect_key != repeated]
            continue
        if code not in ("stale_revision", "incarnation_changed") or attempt >= _MAX_REREADS:
            raise refusal(batch.thread_id, code, result.error.message, result.error.details)
        for write in writes:
            read = yield call("get_record", batch.scope, write.name)
            known[read.name] = (read.revision, read.exists)
        attempt += 1


def refusal(
    thread_id: str, code: str, message: str, details: Optional[Mapping[str, Any]] = None
) -> FencegateError:
    """The error a refused write raises: a superseded owner's, or the catalog's."""
    if code in STALE_OWNER_CODES:
        return StaleWriteOwnerError(
            f"thread {thread_id!r}: this run no longer owns the thread ({code}: {message}); "
            "nothing of this write was stored",
            details,
            code=code,
            thread_id=thread_id,
        )
    return catalog_error(code, message, details)


def operation_id(
    batch: Batch, index: int, writes: List[Write], intents: Sequence[Intent] = ()
) -> str:
    """Derived from the scope, the fence and the exact writes: a lost reply retried sends the same
    id and gets the stored answer, while a superseded run's refusal never blocks the next fence's
    commit (a different id), which a fixed id per checkpoint would."""
    content: Tuple[Any, ...] = (
        batch.scope,
        batch.fence,
        batch.purpose,
        index,
        [[w.name, w.expect_revision, w.value] for w in writes],
    )
    if intents:
        content += ([[i.effect_key, i.target, i.payload] for i in intents],)
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    return f"langgraph:{batch.fence}:{base64.urlsafe_b64encode(digest).decode()[:32]}"
