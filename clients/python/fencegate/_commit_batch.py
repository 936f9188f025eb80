"""Commits sent alone (``POST /v1/commit``) and together (``POST /v1/commits``), as call steps.

A commit alone whose outcome is unknown is decided by the stored outcome of its operationId,
else sent again, and still unknown after the retries settled with abandon. A batch is split to
fit the server's body limit (the client's ``max_body_bytes``, 1 MiB by default) and 64 commits;
each item is answered as its commit alone would be. A batch whose reply was lost is sent again
as it was, not looked up commit by commit: each operationId applies its commit at most once, so
the commits that landed answer their stored outcomes (replayed) and the others apply. An item
still unknown after the retries is settled alone. A batch the server refuses whole (an invalid
body, over its limit, a server without the route) changed nothing: each of its commits is then
sent alone, so each gets its own answer.
"""

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _requests as _req
from ._answers import describe, error_from, is_commit_answer, wire_error
from ._base import FencegateError
from ._call_steps import CallSteps, Exchange, backoff
from ._client_base import ClientBase
from ._routes import route
from ._sending import json_or_none, send_json, unless_unreachable, unreachable
from ._wire import NOT_SENT, Reply, TransportError, encode_body
from .errors import OutcomeUnknownError, StoreUnavailableError
from .models import CommitPart, CommitResult, JsonObject, part_to_wire

#: The most commits of one batch (the server's limit).
MAX_BATCH_COMMITS = 64
#: Statuses of a batch refused whole, before any commit was looked at.
_REFUSED_AS_BATCH = (400, 404, 413)

#: One item's answer: the commit's result, or the error its commit alone raises.
ItemResult = Union[CommitResult, FencegateError]


def commit_body(
    scope: str,
    fence: int,
    operation_id: str,
    writes: Iterable[CommitPart] = (),
    reads: Iterable[CommitPart] = (),
    intents: Iterable[CommitPart] = (),
    task_id: Optional[str] = None,
    policy_version: Optional[str] = None,
    release: bool = False,
    job: Optional[Mapping[str, Any]] = None,
) -> JsonObject:
    """The wire body of one commit."""
    body = _req.body(
        scope=scope,
        fence=fence,
        operation_id=operation_id,
        task_id=task_id,
        policy_version=policy_version,
        release=True if release else None,
        job=_req.job(job),
    )
    body["reads"] = [part_to_wire(part) for part in reads]
    body["writes"] = [part_to_wire(part) for part in writes]
    body["intents"] = [part_to_wire(part) for part in intents]
    return body


def stored_outcome(api: ClientBase, operation_id: str) -> "CallSteps[Optional[CommitResult]]":
    """The stored outcome of an operation; None while it has none."""
    request = route("getOperation", {"operationId": operation_id})
    answer = yield from json_or_none(api, "not_found", request)
    return None if answer is None else CommitResult.from_answer(answer)


def abandon(
    api: ClientBase, operation_id: str, reason: Optional[str] = None
) -> "CallSteps[CommitResult]":
    """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good."""
    request = route("abandonOperation", {"operationId": operation_id})
    answer = yield from send_json(api, request, _req.body(reason=reason))
    return CommitResult.from_answer(answer)


def send_commit(api: ClientBase, body: JsonObject, settle: bool) -> "CallSteps[CommitResult]":
    """One commit alone, with the commit's rule for an unknown outcome."""
    operation_id: str = body["operationId"]
    request = route("commit")
    last: FencegateError = StoreUnavailableError(f"could not reach {api.base_url}")
    unknown: Optional[str] = None  # why an attempt's outcome is unknown, once one's is
    for attempt in range(api.retries + 1):
        yield from backoff(attempt)
        try:
            # Resendable: its operationId applies it at most once.
            reply = yield Exchange(request.method, request.path, body, resendable=True)
        except TransportError as error:
            last = unreachable(api, error)
            if error.failure == NOT_SENT:
                continue
            unknown = str(error)
        else:
            assert reply is not None
            answer = None if reply.unreadable is not None else reply.json()
            if reply.status in (200, 409) and is_commit_answer(answer):
                assert answer is not None  # a commit's answer is a JSON object
                return CommitResult.from_answer(answer)
            refusal = wire_error(reply)
            if refusal is not None and refusal.code == "store_unavailable":
                last = refusal
                continue
            if refusal is not None and refusal.code != "outcome_unknown" and reply.status < 500:
                raise refusal
            # A server fault, outcome_unknown, a redirect, a gateway, an answer that is not a
            # commit's: the commit may have been stored.
            unknown = f"the commit {describe(reply)}" if refusal is None else refusal.message
        stored = yield from unless_unreachable(stored_outcome(api, operation_id))
        if stored is not None:
            return stored
        # Nothing stored yet: the same commit again (its operationId applies it at most once).
    if unknown is None:
        raise last
    return (yield from settle_unknown(api, operation_id, unknown, settle))


def settle_unknown(
    api: ClientBase, operation_id: str, reason: str, settle: bool
) -> "CallSteps[CommitResult]":
    """A commit still unknown after its retries: settled by abandon, never guessed."""
    if settle:
        try:
            return (yield from abandon(api, operation_id))
        except FencegateError as error:
            raise OutcomeUnknownError(
                f"the outcome of commit {operation_id} is unknown ({reason}) and settling it "
                f"failed ({error}); call abandon_operation({operation_id!r}) again",
                {"operationId": operation_id},
            ) from error
    raise OutcomeUnknownError(
        f"the outcome of commit {operation_id} is unknown ({reason}); send the same commit "
        f"again or settle it with abandon_operation({operation_id!r})",
        {"operationId": operation_id},
    )


def split_batches(sizes: Sequence[int], max_body_bytes: int) -> List[List[int]]:
    """Groups of item indices, in order: at most MAX_BATCH_COMMITS each, and a body within
    ``max_body_bytes``. An item too large for any batch goes alone."""
    empty = len(b'{"commits":[]}')
    groups: List[List[int]] = []
    group: List[int] = []
    total = empty
    for i, size in enumerate(sizes):
        if group and (len(group) == MAX_BATCH_COMMITS or total + 1 + size > max_body_bytes):
            groups.append(group)
            group, total = [], empty
        total += size + (1 if group else 0)
        group.append(i)
    if group:
        groups.append(group)
    return groups


def commit_in_batches(
    api: ClientBase, bodies: Sequence[JsonObject], settles: Sequence[bool]
) -> "CallSteps[List[ItemResult]]":
    """Commits of any number in batches that fit, one answer each, in order."""
    results: List[ItemResult] = []
    sizes = [len(encode_body(body)) for body in bodies]
    for group in split_batches(sizes, api.max_body_bytes):
        answers = yield from _commit_batch(
            api, [bodies[i] for i in group], [settles[i] for i in group]
        )
        results.extend(answers)
    return results


def _alone(api: ClientBase, body: JsonObject, settle: bool) -> "CallSteps[ItemResult]":
    try:
        return (yield from send_commit(api, body, settle))
    except FencegateError as error:
        return error


def _commit_batch(
    api: ClientBase, bodies: Sequence[JsonObject], settles: Sequence[bool]
) -> "CallSteps[List[ItemResult]]":
    """One request's worth of commits; a single commit goes alone."""
    if len(bodies) == 1:
        return [(yield from _alone(api, bodies[0], settles[0]))]
    request = route("commitMany")
    results: Dict[int, ItemResult] = {}
    unknown: Dict[int, str] = {}  # why an item's outcome is unknown
    pending = list(range(len(bodies)))
    last: FencegateError = StoreUnavailableError(f"could not reach {api.base_url}")
    for attempt in range(api.retries + 1):
        if not pending:
            break
        yield from backoff(attempt)
        batch = {"commits": [bodies[i] for i in pending]}
        try:
            reply = yield Exchange(request.method, request.path, batch, resendable=True)
        except TransportError as error:
            last = unreachable(api, error)
            if error.failure != NOT_SENT:
                # Lost after it was sent: the same batch again, not a lookup per commit.
                unknown.update((i, str(error)) for i in pending)
            continue
        assert reply is not None
        items = _batch_items(reply, len(pending))
        if items is not None:
            still: List[int] = []
            for i, item in zip(pending, items):
                answer = item.json()
                if 200 <= item.status < 500 and is_commit_answer(answer):
                    results[i] = CommitResult.from_answer(answer)
                    continue
                refused = error_from(item)
                if refused.code == "outcome_unknown" or item.status >= 500:
                    unknown[i] = refused.message
                elif refused.code != "store_unavailable":  # nothing changed: sent again
                    results[i] = refused
                    continue
                last = refused
                still.append(i)
            pending = still
            continue
        refusal = wire_error(reply)
        if refusal is not None and refusal.code == "store_unavailable":
            last = refusal
            continue
        if refusal is not None and refusal.code != "outcome_unknown" and reply.status < 500:
            for i in pending:
                if reply.status in _REFUSED_AS_BATCH:
                    results[i] = yield from _alone(api, bodies[i], settles[i])
                else:
                    results[i] = refusal
            pending = []
            break
        why = f"the batch {describe(reply)}" if refusal is None else refusal.message
        unknown.update((i, why) for i in pending)
        last = refusal if refusal is not None else last
    for i in pending:
        if i not in unknown:
            results[i] = last
            continue
        try:
            results[i] = yield from settle_unknown(
                api, bodies[i]["operationId"], unknown[i], settles[i]
            )
        except FencegateError as error:
            results[i] = error
    return [results[i] for i in range(len(bodies))]


def _batch_items(reply: Reply, expected: int) -> Optional[List[Reply]]:
    """The items of a batch's answer as replies, one per commit sent; None for another answer."""
    if reply.status != 200 or reply.unreadable is not None:
        return None
    answer = reply.json()
    items = answer.get("items") if isinstance(answer, dict) else None
    if not isinstance(items, list) or len(items) != expected:
        return None
    replies: List[Reply] = []
    for item in items:
        status = item.get("status") if isinstance(item, dict) else None
        if not isinstance(status, int) or not isinstance(item.get("body"), dict):
            return None
        replies.append(
            Reply(status=status, text=encode_body(item["body"]).decode(), content_type="json")
        )
    return replies
