"""One description of each saver operation, run by a synchronous or an asynchronous client.

An operation is written once, as a generator (a *plan*) that yields a :class:`Call` of a client
method and is sent back its result (or has its exception thrown in), or a :class:`Gather` of
independent calls and is sent back their results in order (awaited together by the asynchronous
client, made one after the other by the synchronous one); a plan that produces items (``list``)
also yields :class:`Emit`. ``run`` and ``arun`` execute a plan with a ``Client`` or an
``AsyncClient``, ``iterate`` and ``aiterate`` stream its items. The saver's rules thus live in one
place whichever client carries them, and the asynchronous path never blocks the event loop.
"""

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Dict, Generator, Iterator, Tuple, TypeVar, Union

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
class Emit:
    """An item a streaming plan hands to its caller."""

    item: Any


Step = Union[Call, Gather, Emit]
Plan = Generator[Step, Any, T]


def call(method: str, *args: Any, **kwargs: Any) -> Call:
    return Call(method, args, kwargs)


def run(client: Any, plan: "Plan[T]") -> T:
    """Runs a plan with a synchronous client; its return value."""
    cursor = _Cursor(plan)
    for item in _steps(client, cursor):
        raise TypeError(f"a plan run for its result emitted {item!r}")
    return cursor.result  # type: ignore[no-any-return]


async def arun(client: Any, plan: "Plan[T]") -> T:
    """Runs a plan with an asynchronous client; its return value."""
    cursor = _Cursor(plan)
    async for item in _asteps(client, cursor):
        raise TypeError(f"a plan run for its result emitted {item!r}")
    return cursor.result  # type: ignore[no-any-return]


def iterate(client: Any, plan: "Plan[Any]") -> Iterator[Any]:
    """The items a plan emits, its calls made with a synchronous client."""
    return _steps(client, _Cursor(plan))


def aiterate(client: Any, plan: "Plan[Any]") -> AsyncIterator[Any]:
    """The items a plan emits, its calls awaited on an asynchronous client."""
    return _asteps(client, _Cursor(plan))


class _Cursor:
    """A plan being run: its next step, and its return value once it has ended."""

    def __init__(self, plan: "Plan[Any]") -> None:
        self.plan = plan
        self.result: Any = None
        self.step: Any = self._resume(lambda: next(plan))

    def send(self, value: Any) -> None:
        self.step = self._resume(lambda: self.plan.send(value))

    def throw(self, error: Exception) -> None:
        self.step = self._resume(lambda: self.plan.throw(error))

    def _resume(self, move: Any) -> Any:
        try:
            return move()
        except StopIteration as stop:
            self.result = stop.value
            return None


def _steps(client: Any, cursor: _Cursor) -> Iterator[Any]:
    while cursor.step is not None:
        step = cursor.step
        if isinstance(step, Emit):
            yield step.item
            cursor.send(None)
            continue
        try:
            calls = step.calls if isinstance(step, Gather) else (step,)
            results = [getattr(client, one.method)(*one.args, **one.kwargs) for one in calls]
            result = results if isinstance(step, Gather) else results[0]
        except Exception as error:  # handed to the plan, which decides
            cursor.throw(error)
        else:
            cursor.send(result)


async def _asteps(client: Any, cursor: _Cursor) -> AsyncIterator[Any]:
    while cursor.step is not None:
        step = cursor.step
        if isinstance(step, Emit):
            yield step.item
            cursor.send(None)
            continue
        try:
            if isinstance(step, Gather):
                result = await asyncio.gather(
                    *(getattr(client, one.method)(*one.args, **one.kwargs) for one in step.calls)
                )
            else:
                result = await getattr(client, step.method)(*step.args, **step.kwargs)
        except Exception as error:  # handed to the plan, which decides
            cursor.throw(error)
        else:
            cursor.send(result)
