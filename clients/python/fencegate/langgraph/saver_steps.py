"""One description of each saver operation, run by a synchronous or an asynchronous client.

An operation is written once, as a generator of its steps (``SaverSteps``) that yields a
:class:`Call` of a client method and is sent back its result (or has its exception thrown in), or
a :class:`Gather` of independent calls and is sent back their results in order (awaited together
by the asynchronous client, made one after the other by the synchronous one), or a
:class:`Shared` call whose result concurrent operations share while it is in flight, or
:class:`Joined` writes that concurrent operations make together; an operation that produces
items (``list``) also yields :class:`Emit`. ``run`` and ``arun`` carry an operation out with a
``Client`` or an ``AsyncClient``, ``iterate`` and ``aiterate`` stream its items. The saver's
rules thus live in one place whichever client carries them, and the asynchronous path never
blocks the event loop.
"""

import asyncio
import functools
import time
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Generator,
    Iterator,
    List,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from .._shapes import EitherClientApi

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """A client method to call, and its arguments."""

    method: str
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Gather:
    """Calls that do not depend on each other; their results, in order."""

    calls: Tuple[Call, ...]


@dataclass(frozen=True)
class Shared:
    """A call that concurrent operations with the same ``key`` make once: while it is in flight on
    the asynchronous client, a second operation awaits its result (or its error) instead of
    sending it again. ``in_flight`` is the owner's table of those calls; the synchronous client,
    one call at a time, simply makes it."""

    key: Any
    call: Call
    in_flight: Dict[Any, "asyncio.Future[Any]"] = field(compare=False)


@dataclass(frozen=True)
class Joined:
    """Writes that concurrent operations make together: on the asynchronous client
    ``writer.write(client, value)`` (which joins them with the others of the turn), on the
    synchronous one the steps ``writer.alone(value)``."""

    value: Any
    writer: Any = field(compare=False)


@dataclass(frozen=True)
class Pause:
    """A wait between two looks at the store: ``time.sleep`` on the synchronous client (one of
    LangGraph's worker threads), ``asyncio.sleep`` on the asynchronous one."""

    seconds: float


@dataclass(frozen=True)
class Emit:
    """An item a streaming operation hands to its caller."""

    item: Any


Step = Union[Call, Gather, Shared, Joined, Pause, Emit]
#: The steps of one saver operation, returning its result.
SaverSteps = Generator[Step, Any, T]


def call(method: str, *args: Any, **kwargs: Any) -> Call:
    return Call(method, args, kwargs)


def run(client: EitherClientApi, steps: "SaverSteps[T]") -> T:
    """Carries an operation out with a synchronous client; its return value."""
    cursor = _Cursor(steps)
    for item in _steps(client, cursor):
        raise TypeError(f"an operation run for its result emitted {item!r}")
    return cursor.result  # type: ignore[no-any-return]


async def arun(client: EitherClientApi, steps: "SaverSteps[T]") -> T:
    """Carries an operation out with an asynchronous client; its return value."""
    cursor = _Cursor(steps)
    async for item in _asteps(client, cursor):
        raise TypeError(f"an operation run for its result emitted {item!r}")
    return cursor.result  # type: ignore[no-any-return]


def iterate(client: EitherClientApi, steps: "SaverSteps[Any]") -> Iterator[Any]:
    """The items an operation emits, its calls made with a synchronous client."""
    return _steps(client, _Cursor(steps))


def aiterate(client: EitherClientApi, steps: "SaverSteps[Any]") -> AsyncIterator[Any]:
    """The items an operation emits, its calls awaited on an asynchronous client."""
    return _asteps(client, _Cursor(steps))


class _Cursor:
    """An operation being carried out: its next step, and its return value once it has ended."""

    def __init__(self, steps: "SaverSteps[Any]") -> None:
        self.steps = steps
        self.result: Any = None
        self.step: Any = self._resume(lambda: next(steps))

    def send(self, value: Any) -> None:
        self.step = self._resume(lambda: self.steps.send(value))

    def throw(self, error: Exception) -> None:
        self.step = self._resume(lambda: self.steps.throw(error))

    def answer(self, results: Callable[[], List[Any]]) -> None:
        """Sends the step its results (one result for a Call), or throws in what they raised."""
        try:
            values = results()
        except Exception as error:  # handed to the operation, which decides
            self.throw(error)
            return
        self.deliver(values)

    def deliver(self, values: List[Any]) -> None:
        """Sends the step the results of its calls (one result for a Call)."""
        self.send(values if isinstance(self.step, Gather) else values[0])

    def __iter__(self) -> Iterator[Tuple[bool, Any]]:
        """``(True, item)`` for an item emitted (resumed at once), ``(False, calls)`` for calls
        to make, resumed by :meth:`answer` or :meth:`throw`; until the operation ends."""
        while self.step is not None:
            step = self.step
            if isinstance(step, Emit):
                yield True, step.item
                self.send(None)
            elif isinstance(step, Gather):
                yield False, step.calls
            else:
                yield False, (step,)

    def _resume(self, move: Any) -> Any:
        try:
            return move()
        except StopIteration as stop:
            self.result = stop.value
            return None


def _steps(client: EitherClientApi, cursor: _Cursor) -> Iterator[Any]:
    for emitted, value in cursor:
        if emitted:
            yield value
        else:
            cursor.answer(functools.partial(_invoke_each, client, value))


async def _asteps(client: EitherClientApi, cursor: _Cursor) -> AsyncIterator[Any]:
    for emitted, value in cursor:
        if emitted:
            yield value
            continue
        try:
            if len(value) == 1:
                results = [await _invoke(client, value[0])]
            else:
                results = await asyncio.gather(*(_invoke(client, one) for one in value))
        except Exception as error:  # handed to the operation, which decides
            cursor.throw(error)
        else:
            cursor.deliver(results)


def _invoke_each(
    client: EitherClientApi, calls: Sequence[Union[Call, Shared, Joined, Pause]]
) -> List[Any]:
    return [_invoke(client, one) for one in calls]


def _invoke(client: EitherClientApi, one: Union[Call, Shared, Joined, Pause]) -> Any:
    if isinstance(one, Pause):
        if asyncio.iscoroutinefunction(client.commit):
            return asyncio.sleep(one.seconds)
        time.sleep(one.seconds)
        return None
    if isinstance(one, Joined):
        if asyncio.iscoroutinefunction(client.commit):
            return one.writer.write(client, one.value)
        return run(client, one.writer.alone(one.value))
    if isinstance(one, Shared):
        if _is_coroutine(client, one.call):
            return _shared(client, one)
        return _invoke(client, one.call)
    return getattr(client, one.method)(*one.args, **one.kwargs)


def _is_coroutine(client: EitherClientApi, one: Call) -> bool:
    return asyncio.iscoroutinefunction(getattr(client, one.method))


async def _shared(client: EitherClientApi, one: Shared) -> Any:
    pending = one.in_flight.get(one.key)
    if pending is None:
        pending = asyncio.ensure_future(_invoke(client, one.call))
        one.in_flight[one.key] = pending
        pending.add_done_callback(lambda done: _settled(one, done))
    # Shielded: a caller cancelled while waiting leaves the call to the others still waiting.
    return await asyncio.shield(pending)


def _settled(one: Shared, done: "asyncio.Future[Any]") -> None:
    if one.in_flight.get(one.key) is done:
        del one.in_flight[one.key]
