"""One commit for the writes the asynchronous saver is asked for together on one thread under one
fence, as the TypeScript saver's thread-write-batch.ts does.

LangGraph stores a step's pending writes (``aput_writes`` for each task) and its checkpoint
(``aput``) as separate calls; written one by one they cost a commit each, each a durable
transaction of its own. Here the calls asked for in one turn of the event loop (before the loop
runs its next round of callbacks) go out as one commit, in the order they were asked for, so a
checkpoint record still lands with or after everything it points to. A thread also has at most
one such commit in flight: what is asked for meanwhile waits for its answer, and then for the
callers it answered to go on until the loop has nothing else ready to run (a few hops at most),
so that what they ask for next joins it. Under LangGraph's default durability a run hands over
each checkpoint only once the one before it is stored, while its tasks ask for their writes as
they end: the writes join the next checkpoint's commit instead of each costing one of their own.

Calls that together exceed the write limit take as many commits, each call whole in one of them.
Every call is answered only once the commit holding it is; nothing is answered earlier than it
would have been alone. A superseded writer's refusal (a stale fence, a lost lease, a deleted
thread), an outcome in doubt or an unreachable store holds for every write of the batch alike and
answers every call. A refusal of one call's content (a malformed or oversized value, a revision
another writer moved) would otherwise fail its neighbours: then each call is written again on its
own and gets the answer it would have had alone. A caller that stops waiting (cancelled) leaves
its write to go out with the others.

The synchronous half writes each call as it comes (``alone``): its calls come from LangGraph's
worker threads one at a time each, with no turn to gather them in.
"""

import asyncio
from typing import Any, Dict, List, Optional, Tuple

from .._base import FencegateError
from .._methods import AsyncClientApi
from ..models import Intent
from .saver_steps import SaverSteps, arun
from .writes import Batch, RecordToWrite, write_records

#: The store's default limit of intents per commit.
MAX_INTENTS = 16

#: Refusals about one call's own writes, not about the writer: the calls are retried apart.
REFUSALS_OF_ONE_CALL = frozenset(
    {
        "invalid_request",
        "payload_too_large",
        "stale_revision",
        "incarnation_changed",
        "operation_id_conflict",
    }
)

#: The hops of the event loop calls wait at most once a thread's commit is answered: the
#: callers answered ask for their next writes within a few; a loop that always has something
#: ready to run still writes.
_MAX_HOPS = 8

_Key = Tuple[Any, Any, str, int]


class _Call:
    __slots__ = ("client", "batch", "answer")

    def __init__(
        self, client: AsyncClientApi, batch: Batch, answer: "asyncio.Future[None]"
    ) -> None:
        self.client = client
        self.batch = batch
        self.answer = answer


class ThreadWriteBatch:
    def __init__(self, max_writes: int) -> None:
        self.max_writes = max_writes
        #: Per loop, client, scope and fence, the calls not yet sent, in the order they came.
        self._pending: Dict[_Key, List[_Call]] = {}
        #: Per thread with calls to send, the task sending them, until it has sent them all.
        self._writers: Dict[_Key, "asyncio.Task[None]"] = {}

    def alone(self, batch: Batch) -> "SaverSteps[None]":
        """A call written on its own (the synchronous half)."""
        return write_records(batch, self.max_writes)

    async def write(self, client: AsyncClientApi, batch: Batch) -> None:
        """Returns once the commit holding ``batch`` is answered, or raises its refusal."""
        loop = asyncio.get_running_loop()
        key = (loop, client, batch.scope, batch.fence)
        call = _Call(client, batch, loop.create_future())
        pending = self._pending.get(key)
        if pending is None:
            self._pending[key] = [call]
        else:
            pending.append(call)
        if key not in self._writers:
            self._writers[key] = loop.create_task(self._write_all(key))
        await call.answer

    async def _write_all(self, key: _Key) -> None:
        """Sends the thread's calls, one commit at a time. A task's first step runs once the
        turn that created it has ended: every call of that turn has joined. Once a commit is
        answered, what was asked for meanwhile waits while the loop has other callbacks ready
        (CPython's loop keeps them in ``_ready``; another loop's calls go out at once), at most
        ``_MAX_HOPS`` hops: the callers answered go on, and what they ask for next (the next
        checkpoint) joins it."""
        loop = key[0]
        calls: List[_Call] = []
        try:
            while True:
                calls = self._pending.pop(key, [])
                if not calls:
                    return
                for sized in _commit_sized(calls, self.max_writes):
                    await self._commit(sized)
                calls = []
                hops = 0
                while getattr(loop, "_ready", None) and hops < _MAX_HOPS and key in self._pending:
                    await asyncio.sleep(0)
                    hops += 1
        except BaseException:  # cancelled: so is every call still waiting
            for call in calls + self._pending.pop(key, []):
                call.answer.cancel()
            raise
        finally:
            del self._writers[key]

    async def _commit(self, calls: List[_Call]) -> None:
        try:
            await arun(calls[0].client, write_records(_joined(calls), self.max_writes))
        except FencegateError as error:
            if len(calls) > 1 and error.code in REFUSALS_OF_ONE_CALL:
                for call in calls:
                    await self._commit([call])
                return
            _answer(calls, error)
        except Exception as error:  # a transport failure: it holds for every call
            _answer(calls, error)
        else:
            _answer(calls, None)


def _commit_sized(calls: List[_Call], max_writes: int) -> List[List[_Call]]:
    """The calls in order, cut into batches of at most one commit each: a call is always written
    by one commit (unless it alone exceeds the write limit, as it would on its own), so an answer
    never covers a call of which one part was stored and another refused."""
    batches: List[List[_Call]] = []
    batch: List[_Call] = []
    records = intents = 0
    for call in calls:
        size, effects = len(call.batch.records), len(call.batch.intents)
        if batch and (records + size > max_writes or intents + effects > MAX_INTENTS):
            batches.append(batch)
            batch, records, intents = [], 0, 0
        batch.append(call)
        records += size
        intents += effects
    if batch:
        batches.append(batch)
    return batches


def _joined(calls: List[_Call]) -> Batch:
    """One batch of the calls' records in order, one per name: a commit names a record once. A
    record kept once written (a blob, a regular pending write) keeps its first value, as a second
    call would have found it stored; a record a later call replaces (a special channel's slot)
    takes the later value, at the later position."""
    first = calls[0].batch
    if len(calls) == 1:
        return first
    by_name: Dict[str, RecordToWrite] = {}
    for call in calls:
        for record in call.batch.records:
            if record.keep_existing and record.name in by_name:
                continue
            by_name.pop(record.name, None)
            by_name[record.name] = record
    purpose = "\n".join(call.batch.purpose for call in calls)
    # Each key once: a key names its task, and two calls never carry one task's effects.
    by_key: Dict[str, Intent] = {}
    for call in calls:
        for intent in call.batch.intents:
            by_key[intent.effect_key] = intent
    records = list(by_name.values())
    return Batch(
        first.thread_id,
        first.scope,
        first.fence,
        records,
        purpose,
        list(by_key.values()),
        first.policy_version,
    )


def _answer(calls: List[_Call], error: Optional[BaseException]) -> None:
    for call in calls:
        if call.answer.done():  # its caller stopped waiting; the write went on
            continue
        if error is None:
            call.answer.set_result(None)
        else:
            call.answer.set_exception(error)
