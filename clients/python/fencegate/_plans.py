"""How one API call runs, apart from its I/O: a plan is a generator that yields the steps it
needs (an HTTP exchange, a pause between attempts) and returns the call's result.

Request building, answer mapping and retry decisions are written once, as plans (see _api.py);
``run_sync`` and ``run_async`` perform the steps, with blocking I/O or with coroutines. An
exchange that fails is thrown into the plan as its ``TransportError``, so a plan handles it with
an ordinary ``try``/``except`` around the ``yield``.
"""

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generator, Optional, TypeVar, Union

from ._wire import Reply, TransportError

T = TypeVar("T")

_MAX_BACKOFF_S = 1.0


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    body: Any
    #: May be sent twice (a read, an idempotent write, a commit): a transport may send it once
    #: more when the connection it went out on proves to have been dropped before it arrived.
    resendable: bool = False


@dataclass(frozen=True)
class Pause:
    seconds: float


Step = Union[Exchange, Pause]
Plan = Generator[Step, Optional[Reply], T]


def backoff(attempt: int) -> Generator[Step, Optional[Reply], None]:
    """Exponential backoff with jitter before attempt ``attempt``: about 50, 100, 200 ms ..., at
    most 1 s; none before the first."""
    if attempt == 0:
        return
    ceiling = min(_MAX_BACKOFF_S, 0.025 * 2**attempt)
    yield Pause(ceiling / 2 + random.random() * ceiling / 2)


class _Steps:
    """Walks a plan: the next step, given what the previous one came to."""

    def __init__(self, plan: "Plan[Any]") -> None:
        self._plan = plan
        self.reply: Optional[Reply] = None
        self.failure: Optional[TransportError] = None
        self.result: Any = None

    def next(self) -> Optional[Step]:
        """The next step, or None when the plan returned (its value is ``result``)."""
        try:
            if self.failure is not None:
                step = self._plan.throw(self.failure)
            else:
                step = self._plan.send(self.reply)
        except StopIteration as done:
            self.result = done.value
            return None
        self.reply, self.failure = None, None
        return step


def run_sync(plan: "Plan[T]", exchange: Callable[[Exchange], Reply]) -> T:
    """Runs a plan with blocking I/O."""
    steps = _Steps(plan)
    while True:
        step = steps.next()
        if step is None:
            return steps.result  # type: ignore[no-any-return]
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            continue
        try:
            steps.reply = exchange(step)
        except TransportError as error:
            steps.failure = error


async def run_async(plan: "Plan[T]", exchange: Callable[[Exchange], Awaitable[Reply]]) -> T:
    """Runs a plan with coroutines: the event loop runs on while a step waits."""
    steps = _Steps(plan)
    while True:
        step = steps.next()
        if step is None:
            return steps.result  # type: ignore[no-any-return]
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            continue
        try:
            steps.reply = await exchange(step)
        except TransportError as error:
            steps.failure = error
