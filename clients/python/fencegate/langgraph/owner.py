"""WriteOwner: what claiming a thread's write ownership returns.

The claiming saver, bound to one thread and to the fence its claim was granted: every write goes
under that fence, so once another claim supersedes it each write it makes is refused with
:class:`StaleWriteOwnerError`, stores nothing, and goes on being refused. It reads as its saver
does (reading needs no ownership), so a graph may be compiled with the writer itself.
"""

from typing import TYPE_CHECKING, Any

from ..errors import InvalidRequestError
from .effects import WriterKey
from .errors import StaleWriteOwnerError
from .leases import HeldLease
from .saver import FencedCheckpointSaver
from .saver_steps import SaverSteps, arun, call, run

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


class WriteOwner(FencedCheckpointSaver):
    def __init__(self, saver: FencedCheckpointSaver, thread_id: str, lease: HeldLease) -> None:
        super().__init__(
            saver.client,
            saver.holder,
            saver.ttl_ms,
            aclient=saver.aclient,
            operator_client=saver.operator_client,
            operator_aclient=saver.operator_aclient,
            scope_prefix=saver.scope_prefix,
            max_writes=saver.max_writes,
            serde=saver.serde,
        )
        # One lease renewal, one memory of recent checkpoints, one reader, one batch with the saver.
        self._leases, self._recent, self._reader = saver._leases, saver._recent, saver._reader
        self._batch = saver._batch
        self._effects, self._landed = saver._effects, saver._landed
        self.thread_id = thread_id
        self._lease = lease

    @property
    def scope(self) -> str:
        return self._lease.scope

    @property
    def fence(self) -> int:
        """The fence this ownership was granted."""
        return self._lease.fence

    def __repr__(self) -> str:
        return f"WriteOwner(thread_id={self.thread_id!r}, fence={self.fence})"

    def check_write_ownership(self) -> None:
        """Raises :class:`StaleWriteOwnerError` if another run owns the thread now."""
        run(self._client_for("check_write_ownership"), self._check())

    async def acheck_write_ownership(self) -> None:
        await arun(self._client_for("acheck_write_ownership"), self._check())

    def close(self) -> None:
        """Gives the thread up; later writes of this writer are refused."""
        run(self._client_for("close"), self._leases.release(self._lease))

    async def aclose(self) -> None:
        await arun(self._client_for("aclose"), self._leases.release(self._lease))

    release = close
    arelease = aclose

    def _fence(self, config: "RunnableConfig", scope: str) -> "SaverSteps[int]":
        """This ownership's fence, whatever the config says; for its own thread only."""
        if scope != self.scope:
            raise InvalidRequestError(
                f"this writer owns thread {self.thread_id!r}, not "
                f"{(config.get('configurable') or {}).get('thread_id')!r}: claim that thread's "
                "write ownership to write it",
                {"field": "configurable.thread_id"},
            )
        return self.fence
        yield  # steps that need no call

    def _writer(self, config: "RunnableConfig") -> WriterKey:
        return self.fence

    def _check(self) -> "SaverSteps[None]":
        state: Any = yield call("get_scope", self.scope)
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
