"""The one way a call sends a request: the retries its kind allows, and what an answer that says
nothing the client can use means for it (see _api.py for the rules)."""

from typing import Any, Optional, TypeVar

from ._answers import (
    describe,
    error_from,
    leaves_outcome_unknown,
    nothing_changed,
    unusable,
    worth_resending,
)
from ._base import FencegateError
from ._call_steps import CallSteps, Exchange, backoff
from ._client_base import ClientBase
from ._routes import READ, WRITE, RouteRequest
from ._wire import LOST, Reply, TransportError
from .errors import InternalError, OutcomeUnknownError, StoreUnavailableError
from .models import JsonObject

T = TypeVar("T")

#: Codes of an answer that says only that the server cannot answer now.
_CANNOT_ANSWER_NOW = ("store_unavailable", "internal_error", "outcome_unknown")


def send_json(api: ClientBase, request: RouteRequest, body: Any = None) -> "CallSteps[JsonObject]":
    """The JSON object of the success answer (``send`` refuses any other)."""
    reply = yield from send(api, request, body)
    answer: JsonObject = reply.json()
    return answer


def json_or_none(
    api: ClientBase, code: str, request: RouteRequest
) -> "CallSteps[Optional[JsonObject]]":
    """As :func:`send_json`, or None when the server refuses it with ``code`` (not found)."""
    try:
        return (yield from send_json(api, request))
    except FencegateError as error:
        if error.code == code:
            return None
        raise


def send(
    api: ClientBase,
    request: RouteRequest,
    body: Any = None,
    retry: bool = True,
    json: bool = True,
) -> "CallSteps[Reply]":
    """One request with the retries its kind allows; the success reply, a JSON object unless
    ``json`` is False."""
    method, path, kind = request
    last: FencegateError = StoreUnavailableError(f"could not reach {api.base_url}")
    # An earlier attempt may have taken effect: its reply was lost, or said only "unknown".
    uncertain = False
    for attempt in range(api.retries + 1 if retry else 1):
        yield from backoff(attempt)
        try:
            reply = yield Exchange(method, path, body, resendable=kind != WRITE)
        except TransportError as error:
            if error.failure == LOST and kind == WRITE:
                raise OutcomeUnknownError(
                    f"the connection was lost after {method} {path} was sent ({error}); "
                    "read the state to learn whether it took effect",
                    {"method": method, "path": path},
                ) from None
            uncertain = uncertain or error.failure == LOST
            last = unreachable(api, error)
            continue
        assert reply is not None
        untrusted = unusable(reply, json)
        if untrusted is not None:
            raise _untrusted(kind, method, path, reply, untrusted)
        if 200 <= reply.status < 300:
            return reply
        unchanged = nothing_changed(reply)
        failure = (
            OutcomeUnknownError(
                f"{method} {path} {describe(reply)}; read the state to learn whether it "
                "took effect",
                {"method": method, "path": path, "status": reply.status},
            )
            if kind != READ and leaves_outcome_unknown(reply)
            else error_from(reply)
        )
        if not (unchanged or (kind != WRITE and worth_resending(reply))):
            if uncertain and failure.code in ("stale_claim", "not_found"):
                # The lost attempt may be the one that recorded the outcome, or deleted the thing.
                failure.details["afterLostReply"] = True
            raise failure
        uncertain = uncertain or not unchanged
        last = failure
    if uncertain and kind != READ and last.code == "store_unavailable":
        # An attempt whose reply was lost may have taken effect: "nothing was changed" could be
        # false, however the later attempts failed.
        raise OutcomeUnknownError(
            f"{method} {path} was sent and its reply lost, and the server could not be reached "
            f"again ({last.message}); read the state to learn whether it took effect",
            {"method": method, "path": path},
        )
    raise last


def unreachable(api: ClientBase, error: TransportError) -> FencegateError:
    return StoreUnavailableError(f"could not reach fencegate at {api.base_url}: {error}")


def unless_unreachable(steps: "CallSteps[T]") -> "CallSteps[Optional[T]]":
    """What ``steps`` answer, or None when the server or its store cannot answer them now."""
    try:
        return (yield from steps)
    except FencegateError as error:
        if error.code in _CANNOT_ANSWER_NOW:
            return None
        raise


def _untrusted(kind: str, method: str, path: str, reply: Reply, why: str) -> FencegateError:
    """An answer that says nothing the client can use: on a read an internal error, on a
    write an unknown outcome (the server may have taken it)."""
    details = {"method": method, "path": path, "status": reply.status}
    if kind == READ:
        return InternalError(f"{method} {path} {why}", details)
    return OutcomeUnknownError(
        f"{method} {path} {why}; read the state to learn whether it took effect", details
    )
