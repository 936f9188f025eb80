"""Reading a thread back: the tip, one checkpoint, its history, as saver steps (see
saver_steps.py).

Reads need no ownership: any saver, owner or not, reads every thread of its tenant.
"""

from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import Checkpoint, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from ..errors import ScopeNotFoundError
from ..models import RecordState
from .names import blob_name, checkpoint_name, checkpoint_prefix, unescape_name, writes_prefix
from .read_together import ReadTogether
from .recent import Recent, RecentCheckpoints, is_uuid6
from .saver_steps import Call, Emit, SaverSteps, call
from .stored import is_empty, load, recency, writes_in_order

_PAGE = 100
#: LangGraph's own checkpoint ids: uuid6, whose name order is time order.


class ThreadReader:
    """Reads one tenant's threads as saver steps; ``scope_for`` names a thread's scope."""

    def __init__(
        self,
        serde: SerializerProtocol,
        scope_for: Callable[[str], str],
        recent: RecentCheckpoints,
    ) -> None:
        self.serde = serde
        self.scope_for = scope_for
        self.recent = recent
        self.together = ReadTogether()

    def get_tuple(
        self, thread_id: str, namespace: str, checkpoint_id: Optional[str]
    ) -> "SaverSteps[Optional[CheckpointTuple]]":
        scope = self.scope_for(thread_id)
        if checkpoint_id:
            record = yield from self._record(scope, checkpoint_name(namespace, checkpoint_id))
            stored = record.value if record is not None and record.exists else None
        else:
            recent = self.recent.recall(scope, namespace)
            if recent is not None:
                confirmed = yield from self._confirmed(thread_id, recent)
                if confirmed is not None:
                    return confirmed
            newest = yield from self._newest_first(scope, checkpoint_prefix(namespace), 1)
            stored = newest[0] if newest else None
        if stored is None:
            return None
        return (yield from self._to_tuple(thread_id, stored))

    def list(
        self,
        thread_ids: Optional[List[str]],
        thread_prefix: str,
        namespace: Optional[str],
        only_id: Optional[str],
        before_id: Optional[str],
        metadata_filter: Optional[Dict[str, Any]],
        limit: Optional[int],
    ) -> "SaverSteps[None]":
        remaining = limit if limit is not None else -1
        if remaining == 0:
            return
        threads = thread_ids
        if threads is None:
            threads = yield from self._thread_ids(thread_prefix)
        for thread_id in threads:
            scope = self.scope_for(thread_id)
            ordered = yield from self._newest_first(scope, checkpoint_prefix(namespace), None)
            for stored in _below(self.serde, ordered, before_id):
                if only_id and stored["id"] != only_id:
                    continue
                metadata = load(self.serde, stored["metadata"])
                if metadata_filter and any(
                    metadata.get(key) != value for key, value in metadata_filter.items()
                ):
                    continue
                checkpoint_tuple = yield from self._to_tuple(thread_id, stored, metadata)
                yield Emit(checkpoint_tuple)
                remaining -= 1
                if remaining == 0:
                    return

    def _newest_first(
        self, scope: str, prefix: str, wanted: Optional[int]
    ) -> "SaverSteps[List[Dict[str, Any]]]":
        """Checkpoint records newest first. Ids LangGraph makes are uuid6, so name order is time
        order and paging stops once ``wanted`` are found; a thread with ids of another kind is
        read whole and ordered by each checkpoint's timestamp."""
        found: List[Dict[str, Any]] = []
        cursor: Optional[str] = None
        by_name = True
        while True:
            # A page of only what is wanted while name order holds; whole pages once it does not.
            limit = wanted if by_name and wanted is not None else _PAGE
            page = yield from self._page(scope, prefix, cursor, limit)
            for record in page.items:
                if record.exists:
                    found.append(record.value)
                    by_name = by_name and is_uuid6(record.value["id"])
            cursor = page.next_cursor
            if cursor is None or (by_name and wanted is not None and len(found) >= wanted):
                break
        if not by_name:
            found.sort(key=lambda stored: recency(self.serde, stored), reverse=True)
        return found if wanted is None else found[:wanted]

    def _to_tuple(
        self, thread_id: str, stored: Dict[str, Any], metadata: Any = None
    ) -> "SaverSteps[CheckpointTuple]":
        scope = self.scope_for(thread_id)
        namespace = stored["ns"]
        checkpoint = load(self.serde, stored["checkpoint"])
        empty = set(stored.get("empty") or ())
        versions = [
            (channel, version)
            for channel, version in checkpoint.get("channel_versions", {}).items()
            if channel not in empty
        ]
        # The channels' blobs and the first page of pending writes, read together.
        try:
            (first_page,), blobs = yield from self.together.read(
                scope,
                [_page_query(writes_prefix(namespace, stored["id"]), _PAGE)],
                _blob_names(namespace, versions),
            )
        except ScopeNotFoundError:
            first_page, blobs = _EMPTY_PAGE, []
        values = {channel: blob.value for (channel, _), blob in zip(versions, blobs) if blob.exists}
        return (
            yield from self._assemble(thread_id, stored, checkpoint, values, first_page, metadata)
        )

    def _confirmed(self, thread_id: str, recent: Recent) -> "SaverSteps[Optional[CheckpointTuple]]":
        """The tuple of the checkpoint this saver wrote last, if the store confirms it is still
        the newest: one exchange for the newest id, its pending writes and any blob not known."""
        scope = self.scope_for(thread_id)
        stored = recent.stored
        namespace = stored["ns"]
        try:
            (newest, first_page), blobs = yield from self.together.read(
                scope,
                [
                    _page_query(checkpoint_prefix(namespace), 1),
                    _page_query(writes_prefix(namespace, stored["id"]), _PAGE),
                ],
                _blob_names(namespace, recent.missing),
            )
        except ScopeNotFoundError:
            return None
        if not newest.items and newest.next_cursor is not None:
            # The blobs read with it spent the answer's byte budget: the page says where it starts.
            newest = yield from self._page(
                scope, checkpoint_prefix(namespace), newest.next_cursor, 1
            )
        tip = newest.items[0] if newest.items else None
        if tip is None or not tip.exists or tip.value.get("id") != stored["id"]:
            return None
        values = dict(recent.blobs)
        values.update(
            (channel, blob.value)
            for (channel, _), blob in zip(recent.missing, blobs)
            if blob.exists
        )
        checkpoint = load(self.serde, stored["checkpoint"])
        return (yield from self._assemble(thread_id, stored, checkpoint, values, first_page))

    def _assemble(
        self,
        thread_id: str,
        stored: Dict[str, Any],
        checkpoint: Dict[str, Any],
        blobs: Dict[str, Any],
        first_writes_page: Any,
        metadata: Any = None,
    ) -> "SaverSteps[CheckpointTuple]":
        namespace = stored["ns"]
        checkpoint["channel_values"] = {
            channel: load(self.serde, blob) for channel, blob in blobs.items() if not is_empty(blob)
        }
        prefix = writes_prefix(namespace, stored["id"])
        writes = yield from self._pending_writes(
            self.scope_for(thread_id), prefix, first_writes_page
        )
        parent = stored.get("parent")
        return CheckpointTuple(
            config=_config(thread_id, namespace, stored["id"]),
            # The stored checkpoint, with its channel values read back: a Checkpoint again.
            checkpoint=cast(Checkpoint, checkpoint),
            metadata=metadata if metadata is not None else load(self.serde, stored["metadata"]),
            parent_config=None if parent is None else _config(thread_id, namespace, parent),
            pending_writes=[
                (w["task"], w["channel"], load(self.serde, w["value"])) for w in writes
            ],
        )

    def _pending_writes(
        self, scope: str, prefix: str, page: Any
    ) -> "SaverSteps[List[Dict[str, Any]]]":
        """A checkpoint's pending writes, from its first page on."""
        writes: List[Dict[str, Any]] = []
        while True:
            writes.extend(record.value for record in page.items if record.exists)
            if page.next_cursor is None:
                return writes_in_order(writes)
            page = yield from self._page(scope, prefix, page.next_cursor)

    def _thread_ids(self, prefix: str) -> "SaverSteps[List[str]]":
        threads: List[str] = []
        cursor: Optional[str] = None
        while True:
            page = yield call("list_scopes", prefix=prefix, limit=_PAGE, cursor=cursor)
            threads.extend(
                unescape_name(scope.scope[len(prefix) :])
                for scope in page.items
                if scope.status == "active"
            )
            cursor = page.next_cursor
            if cursor is None:
                return threads

    def _page(
        self, scope: str, prefix: str, cursor: Optional[str], limit: int = _PAGE
    ) -> "SaverSteps[Any]":
        """One descending page of a prefix; a thread never written reads as empty."""
        try:
            return (yield _page_call(scope, prefix, cursor, limit))
        except ScopeNotFoundError:
            return _EMPTY_PAGE

    def _record(self, scope: str, name: str) -> "SaverSteps[Optional[RecordState]]":
        try:
            record: RecordState = yield call("get_record", scope, name)
        except ScopeNotFoundError:
            return None
        return record


def _blob_names(namespace: str, versions: List[Tuple[str, Any]]) -> List[str]:
    return [blob_name(namespace, channel, version) for channel, version in versions]


def _page_query(prefix: str, limit: int) -> Dict[str, Any]:
    """A newest-first page's ``list_records_page`` arguments."""
    return {"prefix": prefix, "direction": "desc", "limit": limit}


def _page_call(scope: str, prefix: str, cursor: Optional[str], limit: int) -> Call:
    return call(
        "list_records_page", scope, prefix=prefix, direction="desc", limit=limit, cursor=cursor
    )


class _EmptyPage:
    items: List[RecordState] = []
    next_cursor: Optional[str] = None


_EMPTY_PAGE = _EmptyPage()


def _below(
    serde: SerializerProtocol, ordered: List[Dict[str, Any]], before_id: Optional[str]
) -> Iterator[Dict[str, Any]]:
    """The checkpoints older than ``before_id`` (all of them without it), newest first."""
    if not before_id:
        yield from ordered
        return
    anchor = next((stored for stored in ordered if stored["id"] == before_id), None)
    bound: Tuple[str, str] = recency(serde, anchor) if anchor is not None else ("", "")
    for stored in ordered:
        older = recency(serde, stored) < bound if anchor is not None else stored["id"] < before_id
        if older:
            yield stored


def _config(thread_id: str, namespace: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": namespace,
            "checkpoint_id": checkpoint_id,
        }
    }
