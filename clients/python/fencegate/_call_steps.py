"""How one API call runs, apart from its I/O: its steps are a generator that yields what the
call needs (an HTTP exchange, a pause between attempts) and returns the call's result.

Request building, answer mapping and retry decisions are written once, as call steps (see
_api.py); ``run_sync`` and ``run_async`` perform the steps, with blocking I/O or with coroutines.
An exchange that fails is thrown into the steps as its ``TransportError``, so a call handles it
with an ordinary ``try``/``except`` around the ``yield``.
"""

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generator, Generic, Optional, TypeVar, Union

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
#: The steps of one API call, returning the call's result.
CallSteps = Generator[Step, Optional[Reply], T]


def backoff(attempt: int) -> Generator[Step, Optional[Reply], None]:
    """Exponential backoff with jitter before attempt ``attempt``: about 50, 100, 200 ms ..., at
    most 1 s; none before the first."""
    if attempt == 0:
        return
    ceiling = min(_MAX_BACKOFF_S, 0.025 * 2**attempt)
    yield Pause(ceiling / 2 + random.random() * ceiling / 2)


class _StepWalker(Generic[T]):
    """Walks a call's steps: the next step, given what the previous one came to."""

    #: What the call returned; set once ``next`` has answered None.
    result: T

    def __init__(self, steps: "CallSteps[T]") -> None:
        self._steps = steps
        self.reply: Optional[Reply] = None
        self.failure: Optional[TransportError] = None

    def next(self) -> Optional[Step]:
        """The next step, or None when the call returned (its value is ``result``)."""
        try:
            if self.failure is not None:
                step = self._steps.throw(self.failure)
            else:
                step = self._steps.send(self.reply)
        except StopIteration as done:
            self.result = done.value
            return None
        self.reply, self.failure = None, None
        return step


def run_sync(call: "CallSteps[T]", exchange: Callable[[Exchange], Reply]) -> T:
    """Runs a call's steps with blocking I/O."""
    steps = _StepWalker(call)
    while True:
        step = steps.next()
        if step is None:
            return steps.result
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            continue
        try:
            steps.reply = exchange(step)
        except TransportError as error:
            steps.failure = error


async def run_async(call: "CallSteps[T]", exchange: Callable[[Exchange], Awaitable[Reply]]) -> T:
    """Runs a call's steps with coroutines: the event loop runs on while a step waits."""
    steps = _StepWalker(call)
    while True:
        step = steps.next()
        if step is None:
            return steps.result
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            continue
        try:
            steps.reply = await exchange(step)
        except TransportError as error:
            steps.failure = error
