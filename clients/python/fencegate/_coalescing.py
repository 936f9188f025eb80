"""Coalescing of an ``AsyncClient``'s commits: ``commit`` calls made close together (before the
event loop's next turn, or within a window of at most 1 ms) go out together, one ``POST
/v1/commits`` per batch that fits, and each caller gets its own answer or error. A commit alone in
its window goes over ``POST /v1/commit``, as without coalescing."""

import asyncio
from typing import Awaitable, Callable, List, Optional, Tuple

from ._call_steps import CallSteps, Exchange, run_async
from ._client_base import ClientBase
from ._commit_batch import ItemResult, commit_in_batches
from ._wire import Reply
from .models import CommitResult, JsonObject

#: The longest a commit waits for others to go with it.
MAX_COALESCE_WINDOW_MS = 1.0


def check_window(window_ms: float) -> float:
    if not 0 <= window_ms <= MAX_COALESCE_WINDOW_MS:
        raise ValueError(
            f"coalesce_window_ms must be 0 to {MAX_COALESCE_WINDOW_MS:g} (0: until the event "
            f"loop's next turn), not {window_ms}"
        )
    return window_ms


class CommitCoalescer:
    """The commits waiting to go together, on one event loop."""

    def __init__(
        self,
        api: ClientBase,
        exchange: Callable[[Exchange], Awaitable[Reply]],
        window_ms: float,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self._api = api
        self._exchange = exchange
        self._window_ms = window_ms
        self._waiting: List[Tuple[JsonObject, bool, "asyncio.Future[CommitResult]"]] = []

    def commit(self, body: JsonObject, settle: bool) -> "asyncio.Future[CommitResult]":
        answer: "asyncio.Future[CommitResult]" = self.loop.create_future()
        self._waiting.append((body, settle, answer))
        if len(self._waiting) == 1:
            if self._window_ms == 0:
                self.loop.call_soon(self._flush)
            else:
                self.loop.call_later(self._window_ms / 1000, self._flush)
        return answer

    def _flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        steps: CallSteps[List[ItemResult]] = commit_in_batches(
            self._api, [body for body, _, _ in waiting], [settle for _, settle, _ in waiting]
        )
        task = self.loop.create_task(run_async(steps, self._exchange))
        task.add_done_callback(lambda done: _answer(done, [f for _, _, f in waiting]))


def _answer(
    done: "asyncio.Task[List[ItemResult]]", answers: "List[asyncio.Future[CommitResult]]"
) -> None:
    failure: Optional[BaseException] = None if done.cancelled() else done.exception()
    if done.cancelled() or failure is not None:
        for answer in answers:
            if not answer.done():
                if failure is None:
                    answer.cancel()
                else:
                    answer.set_exception(failure)
        return
    for answer, item in zip(answers, done.result()):
        if answer.done():  # its caller stopped waiting
            continue
        if isinstance(item, CommitResult):
            answer.set_result(item)
        else:
            answer.set_exception(item)
