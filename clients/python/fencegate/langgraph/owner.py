"""WriteOwner: what claiming a thread's write ownership returns.

A checkpointer bound to one thread and to the fence its claim was granted: its writes go through
its saver under that fence, so once another claim supersedes it every write it makes is refused
with :class:`StaleWriteOwnerError`, stores nothing, and goes on being refused. Reads are its
saver's (reading needs no ownership), so a graph may be compiled with the writer itself.
"""

from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, Iterator, Optional, Sequence, Tuple

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from ..errors import InvalidRequestError
from .errors import StaleWriteOwnerError
from .leases import HeldLease
from .plans import Plan, arun, call, run

if TYPE_CHECKING:
    from .saver import FencedCheckpointSaver


class WriteOwner(BaseCheckpointSaver):
    def __init__(self, saver: "FencedCheckpointSaver", thread_id: str, lease: HeldLease) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver
        self.thread_id = thread_id
        self._lease = lease

    @property
    def scope(self) -> str:
        return self._lease.scope

    @property
    def fence(self) -> int:
        """The fence this ownership was granted; ``configurable.fence`` of a run it carries."""
        return self._lease.fence

    def __repr__(self) -> str:
        return f"WriteOwner(thread_id={self.thread_id!r}, fence={self.fence})"

    # Writes, under this ownership's fence

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.saver.put(self._fenced(config), checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self.saver.aput(self._fenced(config), checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.saver.put_writes(self._fenced(config), writes, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[Tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.saver.aput_writes(self._fenced(config), writes, task_id, task_path)

    def check_write_ownership(self) -> None:
        """Raises :class:`StaleWriteOwnerError` if another run owns the thread now."""
        run(self.saver._sync("check_write_ownership"), self._check())

    async def acheck_write_ownership(self) -> None:
        await arun(self.saver._async("acheck_write_ownership"), self._check())

    def release(self) -> None:
        """Gives the thread up; later writes of this writer are refused."""
        run(self.saver._sync("release"), self.saver._leases.release(self._lease))

    async def arelease(self) -> None:
        await arun(self.saver._async("arelease"), self.saver._leases.release(self._lease))

    def __enter__(self) -> "WriteOwner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    async def __aenter__(self) -> "WriteOwner":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.arelease()

    # Reads are the saver's

    def get_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return self.saver.get_tuple(config)

    async def aget_tuple(self, config: RunnableConfig) -> Optional[CheckpointTuple]:
        return await self.saver.aget_tuple(config)

    def list(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> Iterator[CheckpointTuple]:
        return self.saver.list(config, filter=filter, before=before, limit=limit)

    def alist(
        self,
        config: Optional[RunnableConfig],
        *,
        filter: Optional[Dict[str, Any]] = None,
        before: Optional[RunnableConfig] = None,
        limit: Optional[int] = None,
    ) -> AsyncIterator[CheckpointTuple]:
        return self.saver.alist(config, filter=filter, before=before, limit=limit)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.saver.get_next_version(current, channel)

    def _fenced(self, config: RunnableConfig) -> RunnableConfig:
        configurable = dict(config.get("configurable") or {})
        thread_id = configurable.get("thread_id")
        if thread_id is not None and str(thread_id) != self.thread_id:
            raise InvalidRequestError(
                f"this writer owns thread {self.thread_id!r}, not {thread_id!r}: claim that "
                "thread's write ownership to write it",
                {"field": "configurable.thread_id"},
            )
        configurable["thread_id"] = self.thread_id
        configurable["fence"] = self.fence
        return {**config, "configurable": configurable}

    def _check(self) -> "Plan[None]":
        state = yield call("get_scope", self.scope)
        if state is None or state.status != "active":
            code = "scope_deleted"
        elif state.fence != self.fence:
            code = "stale_fence"
        elif state.holder != self._lease.holder:
            code = "authority_revoked" if state.holder is None else "not_holder"
        else:
            return
        raise StaleWriteOwnerError(
            f"thread {self.thread_id!r}: this writer's fence {self.fence} no longer owns it",
            {"fence": self.fence, "currentFence": None if state is None else state.fence},
            code=code,
            thread_id=self.thread_id,
        )
