"""FencedStore: LangGraph's long-term memory store (``BaseStore``) on fencegate records, the
Python twin of the TypeScript FencedStore (same records, same rules: each reads the other's
memory).

Memory lives inside the thread's scope (memory_names.py), so every write is a commit under the
fence the thread's checkpoints are written under: a superseded run's memory write is refused by
the check that refuses its checkpoints (:class:`StaleWriteOwnerError`), and nothing of it is
stored. A put may carry a precondition, ``if_revision`` (the revision a get answered) or
``if_absent``; when it does not hold the put is refused with :class:`MemoryConflictError` and
writes nothing. A put without one is LangGraph's upsert: it replaces what the item holds when it
lands.

``BaseStore`` calls carry no config, so the thread comes from the binding (``for_run(config)``,
``for_thread(thread_id)``), or, for a store called inside a node, from the node's own config.
"""

import base64
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Literal, NamedTuple, Optional, Tuple, Union

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    ListNamespacesOp,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from .._base import FencegateError
from ..errors import InvalidRequestError
from ..models import RecordState, Write
from .errors import STALE_OWNER_CODES, MemoryConflictError, StaleWriteOwnerError
from .memory_names import (
    MEMORY_PREFIX,
    check_namespace,
    memory_address,
    memory_name,
    namespace_prefix,
)
from .memory_select import check_filter, matches_filter, select_namespaces
from .owner import WriteOwner
from .saver import FencedCheckpointSaver
from .saver_steps import Call, SaverSteps, arun, call, run
from .writes import refusal

__all__ = ["FencedPutOp", "FencedStore", "MemoryConflictError", "MemoryItem"]

#: Unconditional puts retried on a concurrent change before the conflict is answered.
UPSERT_TRIES = 5
_PAGE = 100
_CHECKPOINTER_KEY = "__pregel_checkpointer"
#: What the saver's fence answers for a thread that was deleted.
_DELETED = -1


class MemoryItem(SearchItem):
    """An item with the revision a conditional put expects (``if_revision``)."""

    __slots__ = ("revision",)

    def __init__(
        self,
        namespace: Tuple[str, ...],
        key: str,
        value: Dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        revision: int,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at)
        self.revision = revision

    def dict(self) -> Dict[str, Any]:
        return {**super().dict(), "revision": self.revision}


@dataclass(frozen=True)
class FencedPutOp:
    """A ``PutOp`` that may carry a precondition, for ``batch``. ``value`` None deletes."""

    namespace: Tuple[str, ...]
    key: str
    value: Optional[Dict[str, Any]]
    index: Union[Literal[False], List[str], None] = None
    ttl: Optional[float] = None
    #: Write only while the item is at this revision (from a get or search); 0: never existed.
    if_revision: Optional[int] = None
    #: Write only while the item does not exist (never written, or deleted).
    if_absent: bool = False


class _Thread(NamedTuple):
    thread_id: str
    scope: str
    config: RunnableConfig


_AnyOp = Union[Op, FencedPutOp]


class FencedStore(BaseStore):
    """``saver`` is the FencedCheckpointSaver whose threads hold the memory: its clients (a
    **worker** token), its thread scopes, its fences. The synchronous methods need its
    ``client``, the ``a``-methods its ``aclient``."""

    supports_ttl = False

    def __init__(self, saver: FencedCheckpointSaver, run: Optional[RunnableConfig] = None) -> None:
        self.saver = saver
        self._run = run

    def for_run(self, config: RunnableConfig) -> "FencedStore":
        """This memory bound to the thread of ``config`` (``configurable.thread_id``) and the fence
        its writes carry (``configurable.fence``, else the saver's lease). Pass it as the graph's
        store, or call it from anywhere."""
        _thread_id(config, required=True)
        return FencedStore(self.saver, config)

    def for_thread(self, thread_id: str, fence: Optional[int] = None) -> "FencedStore":
        """``for_run`` for a thread and, when the run has one, its fence."""
        configurable: Dict[str, Any] = {"thread_id": thread_id}
        if fence is not None:
            configurable["fence"] = fence
        return self.for_run({"configurable": configurable})

    # BaseStore

    def batch(self, ops: Iterable[_AnyOp]) -> List[Result]:
        """Runs the operations in order, each seeing the ones before it. Every operation is
        checked before the first runs, so bad input changes nothing; a refusal (a conflict, a
        superseded run) stops the batch there, with the operations before it applied."""
        listed = list(ops)
        thread = self._prepare(listed)
        return run(self.saver._client_for("put"), self._batch(thread, listed))

    async def abatch(self, ops: Iterable[_AnyOp]) -> List[Result]:
        listed = list(ops)
        thread = self._prepare(listed)
        return await arun(self.saver._client_for("aput"), self._batch(thread, listed))

    def get(
        self, namespace: Tuple[str, ...], key: str, *, refresh_ttl: Optional[bool] = None
    ) -> Optional[MemoryItem]:
        found = self.batch([GetOp(tuple(namespace), key)])[0]
        return found if isinstance(found, MemoryItem) else None

    async def aget(
        self, namespace: Tuple[str, ...], key: str, *, refresh_ttl: Optional[bool] = None
    ) -> Optional[MemoryItem]:
        found = (await self.abatch([GetOp(tuple(namespace), key)]))[0]
        return found if isinstance(found, MemoryItem) else None

    def put(
        self,
        namespace: Tuple[str, ...],
        key: str,
        value: Dict[str, Any],
        index: Union[Literal[False], List[str], None] = None,
        *,
        ttl: Union[Optional[float], NotProvided] = NOT_PROVIDED,
        if_revision: Optional[int] = None,
        if_absent: bool = False,
    ) -> None:
        """Writes ``value`` under ``key``. With ``if_revision`` or ``if_absent`` it lands only
        while that holds, else it is refused with :class:`MemoryConflictError`; without, it
        replaces what the item holds."""
        op = _put_op(namespace, key, value, index, ttl, if_revision, if_absent)
        self.batch([op])

    async def aput(
        self,
        namespace: Tuple[str, ...],
        key: str,
        value: Dict[str, Any],
        index: Union[Literal[False], List[str], None] = None,
        *,
        ttl: Union[Optional[float], NotProvided] = NOT_PROVIDED,
        if_revision: Optional[int] = None,
        if_absent: bool = False,
    ) -> None:
        op = _put_op(namespace, key, value, index, ttl, if_revision, if_absent)
        await self.abatch([op])

    def delete(
        self, namespace: Tuple[str, ...], key: str, *, if_revision: Optional[int] = None
    ) -> None:
        """Deletes the item; with ``if_revision`` only while it is at that revision."""
        self.batch([FencedPutOp(tuple(namespace), key, None, if_revision=if_revision)])

    async def adelete(
        self, namespace: Tuple[str, ...], key: str, *, if_revision: Optional[int] = None
    ) -> None:
        await self.abatch([FencedPutOp(tuple(namespace), key, None, if_revision=if_revision)])

    # The operations, as steps for either kind of client

    def _prepare(self, ops: List[_AnyOp]) -> _Thread:
        for op in ops:
            _check(op)
        config = self._run
        if config is None:
            try:
                config = get_config()
            except RuntimeError:
                config = None
        thread_id = None if config is None else _thread_id(config, required=False)
        if config is None or thread_id is None:
            raise InvalidRequestError(
                "FencedStore keeps memory in a thread's scope and no thread is known here: call "
                "it inside a graph node of a run with configurable.thread_id, or bind it with "
                "store.for_run(config) or store.for_thread(thread_id)",
                {"field": "configurable.thread_id"},
            )
        return _Thread(thread_id, self.saver.scope_for(thread_id), config)

    def _batch(self, thread: _Thread, ops: List[_AnyOp]) -> "SaverSteps[List[Result]]":
        results: List[Result] = []
        for op in ops:
            if isinstance(op, SearchOp):
                results.append((yield from self._search(thread, op)))
            elif isinstance(op, (PutOp, FencedPutOp)):
                yield from self._put(thread, _fenced(op))
                results.append(None)
            elif isinstance(op, GetOp):
                record = yield call("get_record", thread.scope, memory_name(op.namespace, op.key))
                results.append(_item(record))
            else:
                results.append((yield from self._list_namespaces(thread, op)))
        return results

    def _put(self, thread: _Thread, op: FencedPutOp) -> "SaverSteps[None]":
        name = memory_name(op.namespace, op.key)
        conditional = op.if_revision is not None or op.if_absent
        attempt = 1
        while True:
            current: RecordState = yield call("get_record", thread.scope, name)
            if not _precondition_holds(op, current):
                raise _conflict(op, current)
            if op.value is None and not current.exists:
                return
            committed = yield from self._commit(thread, name, op, current)
            if committed:
                return
            now: RecordState = yield call("get_record", thread.scope, name)
            if conditional or attempt >= UPSERT_TRIES:
                raise _conflict(op, now)
            attempt += 1

    def _commit(
        self, thread: _Thread, name: str, op: FencedPutOp, current: RecordState
    ) -> "SaverSteps[bool]":
        """One write expecting the revision read; False when the store says it moved since."""
        if op.value is None:
            write = Write(name, expect_revision=current.revision, delete=True)
        else:
            # The first write cannot know the store time its commit lands at: it stores None, and
            # the item's creation is its record's update time until a later write copies it in.
            created = _created_ms(current) if current.exists else None
            stored = {"value": op.value, "createdAt": created}
            write = Write(name, expect_revision=current.revision, value=stored)
        fence = yield from self._fence(thread)
        try:
            result = yield call(
                "commit",
                scope=thread.scope,
                fence=fence,
                operation_id=_operation_id(thread.scope, fence, write),
                writes=[write],
            )
        except FencegateError as error:
            if error.code in STALE_OWNER_CODES:
                raise refusal(thread.thread_id, error.code, error.message, error.details) from None
            raise
        if result.committed:
            return True
        code = result.error.code
        if code in ("stale_revision", "incarnation_changed"):
            return False
        raise refusal(thread.thread_id, code, result.error.message, result.error.details)

    def _fence(self, thread: _Thread) -> "SaverSteps[int]":
        """The fence the thread's checkpoints are written under: the writer a claim answered when
        it is the run's checkpointer, else the run's ``configurable.fence``, else the saver's
        lease on the thread."""
        checkpointer = (thread.config.get("configurable") or {}).get(_CHECKPOINTER_KEY)
        if isinstance(checkpointer, WriteOwner) and checkpointer.scope == thread.scope:
            return checkpointer.fence
        fence = yield from self.saver._fence(thread.config, thread.scope)
        if fence == _DELETED:
            raise StaleWriteOwnerError(
                f"thread {thread.thread_id!r} was deleted: its memory is not written",
                {"scope": thread.scope},
                code="scope_deleted",
                thread_id=thread.thread_id,
            )
        return fence

    def _search(self, thread: _Thread, op: SearchOp) -> "SaverSteps[List[SearchItem]]":
        """The items under the prefix in name order, page by page until enough matched: a
        thread is never read whole."""
        wanted = op.offset + op.limit
        found: List[SearchItem] = []
        prefix = namespace_prefix(op.namespace_prefix)
        cursor: Optional[str] = None
        while True:
            page = yield _page(thread.scope, prefix, cursor)
            for record in page.items:
                item = _item(record)
                if item is not None and matches_filter(item.value, op.filter):
                    found.append(item)
            cursor = page.next_cursor
            if cursor is None or len(found) >= wanted:
                return found[op.offset : wanted]

    def _list_namespaces(
        self, thread: _Thread, op: ListNamespacesOp
    ) -> "SaverSteps[List[Tuple[str, ...]]]":
        namespaces = set()
        cursor: Optional[str] = None
        while True:
            page = yield _page(thread.scope, MEMORY_PREFIX, cursor)
            for record in page.items:
                address = memory_address(record.name) if record.exists else None
                if address is not None:
                    namespaces.add(address[0])
            cursor = page.next_cursor
            if cursor is None:
                return select_namespaces(namespaces, op)


def _page(scope: str, prefix: str, cursor: Optional[str]) -> Call:
    return call("list_records_page", scope, prefix=prefix, limit=_PAGE, cursor=cursor)


def _item(record: RecordState) -> Optional[MemoryItem]:
    address = memory_address(record.name) if record.exists else None
    stored = record.value
    # A raw commit under ``mem/`` may hold a value FencedStore never writes.
    if address is None or not isinstance(stored, dict) or not isinstance(stored.get("value"), dict):
        return None
    namespace, key = address
    created = _created_ms(record)
    updated = record.updated_at if record.updated_at is not None else created
    return MemoryItem(
        namespace, key, stored["value"], _time(created), _time(updated), record.revision
    )


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _created_ms(record: RecordState) -> int:
    """When the item of an existing record was first written, by the store's clock."""
    created = record.value.get("createdAt")
    if isinstance(created, int):
        return created
    return record.updated_at or 0


def _precondition_holds(op: FencedPutOp, current: RecordState) -> bool:
    if op.if_absent and current.exists:
        return False
    if op.if_revision is None:
        return True
    # A deleted item's revision is its deletion's: a put that read it absent expects 0 or that.
    if current.exists:
        return current.revision == op.if_revision
    return op.if_revision in (0, current.revision)


def _conflict(op: FencedPutOp, current: RecordState) -> MemoryConflictError:
    expected = f"at revision {op.if_revision}" if op.if_revision is not None else "absent"
    return MemoryConflictError(tuple(op.namespace), op.key, expected, _item(current))


def _operation_id(scope: str, fence: int, write: Write) -> str:
    """``langgraph-memory:<fence>:<digest of the write>``: a retried request sends the same id."""
    content = [scope, fence, [write.name, write.expect_revision, write.value, write.delete]]
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return f"langgraph-memory:{fence}:{digest[:32]}"


def _put_op(
    namespace: Tuple[str, ...],
    key: str,
    value: Dict[str, Any],
    index: Union[Literal[False], List[str], None],
    ttl: Union[Optional[float], NotProvided],
    if_revision: Optional[int],
    if_absent: bool,
) -> FencedPutOp:
    given_ttl = None if isinstance(ttl, NotProvided) else ttl
    return FencedPutOp(tuple(namespace), key, value, index, given_ttl, if_revision, if_absent)


def _fenced(op: Union[PutOp, FencedPutOp]) -> FencedPutOp:
    if isinstance(op, FencedPutOp):
        return op
    return FencedPutOp(tuple(op.namespace), op.key, op.value, op.index, op.ttl)


def _check(op: Any) -> None:
    """Input refused before anything runs: namespaces, keys, values, filters, preconditions."""
    if isinstance(op, SearchOp):
        check_namespace(op.namespace_prefix, allow_empty=True)
        check_filter(op.filter)
        if op.query is not None:
            raise InvalidRequestError(
                "FencedStore has no vector index: search by namespace prefix and filter, "
                "without query",
                {"field": "query"},
            )
        _check_count(op.limit, "limit")
        _check_count(op.offset, "offset")
    elif isinstance(op, (PutOp, FencedPutOp)):
        check_namespace(op.namespace, written=True)
        memory_name(op.namespace, op.key)
        _check_put(_fenced(op))
    elif isinstance(op, GetOp):
        check_namespace(op.namespace, allow_empty=True)
        memory_name(op.namespace, op.key)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            check_namespace(condition.path, allow_empty=True)
        _check_count(op.limit, "limit")
        _check_count(op.offset, "offset")
        if op.max_depth is not None:
            _check_count(op.max_depth, "max_depth")
    else:
        raise InvalidRequestError(
            f"FencedStore runs GetOp, SearchOp, PutOp, FencedPutOp and ListNamespacesOp, not "
            f"{type(op).__name__}",
            {"field": "ops"},
        )


def _check_put(op: FencedPutOp) -> None:
    if op.value is not None and not isinstance(op.value, dict):
        raise InvalidRequestError(
            "a memory value must be a dict (or None to delete)", {"field": "value"}
        )
    if op.ttl is not None:
        raise InvalidRequestError(
            "FencedStore keeps no TTL: memory lives as long as its thread (delete_thread, or "
            "delete the item); put without ttl",
            {"field": "ttl"},
        )
    if op.if_revision is not None:
        _check_count(op.if_revision, "if_revision")
    if not isinstance(op.if_absent, bool):
        raise InvalidRequestError("if_absent must be True or False", {"field": "if_absent"})
    if op.if_absent and (op.if_revision is not None or op.value is None):
        raise InvalidRequestError(
            "if_absent goes with a put of a value, without if_revision: give one precondition",
            {"field": "if_absent"},
        )


def _check_count(value: Any, field: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidRequestError(f"{field} must be a whole number ≥ 0", {"field": field})


def _thread_id(config: RunnableConfig, required: bool) -> Optional[str]:
    value = (config.get("configurable") or {}).get("thread_id")
    if isinstance(value, str) and value != "":
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not required and value is None:
        return None
    raise InvalidRequestError(
        "FencedStore needs configurable.thread_id (a string): the memory lives in that thread",
        {"field": "configurable.thread_id"},
    )
