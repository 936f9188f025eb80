"""What an answer means: the catalog error it carries, or what an answer that is not fencegate's
(a redirect, a proxy's gateway error) says about the request."""

from typing import Any, Mapping, Optional, Type

from ._base import FencegateError
from ._wire import Reply
from .errors import ERROR_CLASSES, InternalError, RateLimitedError

#: Gateway and availability statuses: a proxy may have passed the request on before it failed.
_GATEWAY = (502, 503, 504)


def wire_error(reply: Reply) -> Optional[FencegateError]:
    """The catalog error of a fencegate error answer, or None for any other answer."""
    answer = reply.json()
    error = answer.get("error") if isinstance(answer, dict) else None
    if not (isinstance(error, dict) and isinstance(error.get("code"), str)):
        return None
    code: str = error["code"]
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    message = error.get("message")
    if not isinstance(message, str):
        message = code
    return catalog_error(code, message, details)


def catalog_error(
    code: str, message: str, details: Optional[Mapping[str, Any]] = None
) -> FencegateError:
    """The catalog's exception for ``code``; a code this client does not know stays as is."""
    cls: Type[FencegateError] = ERROR_CLASSES.get(code, FencegateError)
    return cls(message, details, code=code)


def error_from(reply: Reply) -> FencegateError:
    """The catalog error of an error answer; an answer that is not fencegate's says so."""
    error = wire_error(reply)
    if error is not None:
        return error
    if reply.status == 429:
        # Too Many Requests refuses the request before it is served, whoever answers it.
        return RateLimitedError(
            "the server answered HTTP 429 Too Many Requests without a fencegate error body "
            "(a proxy or gateway in between limits the rate); nothing was changed: "
            "send it again later",
            {"status": reply.status},
        )
    if is_redirect(reply.status):
        return InternalError(
            f"the server answered HTTP {reply.status}, a redirect; API calls never follow "
            "redirects: give the client the fencegate server's own URL",
            {"status": reply.status},
        )
    return InternalError(
        f"the server answered HTTP {reply.status} without a fencegate error body",
        {"status": reply.status},
    )


def leaves_outcome_unknown(reply: Reply) -> bool:
    """An answer that says nothing about what a write did: not fencegate's error, and either a
    redirect (never followed) or a gateway error."""
    return wire_error(reply) is None and (is_redirect(reply.status) or reply.status in _GATEWAY)


def describe(reply: Reply) -> str:
    """What a write's answer says happened, for an unknown-outcome error."""
    untrusted = unusable(reply, json=True)
    if untrusted is not None:
        return untrusted
    if is_redirect(reply.status):
        return f"was answered HTTP {reply.status}, a redirect, which API calls never follow"
    return f"was answered HTTP {reply.status} without a fencegate error body (a proxy or gateway)"


def unusable(reply: Reply, json: bool) -> Optional[str]:
    """Why an answer says nothing the client can use, or None: a body too long to read, or (when
    ``json``) a 2xx that is not a JSON object, such as a proxy's or a sign-in page."""
    if reply.unreadable is not None:
        return f"was answered HTTP {reply.status} {reply.unreadable}"
    if json and 200 <= reply.status < 300 and not isinstance(reply.json(), dict):
        what = reply.content_type or "no content type"
        return f"was answered HTTP {reply.status} with a body that is not a JSON object ({what})"
    return None


def is_redirect(status: int) -> bool:
    return 300 <= status < 400


def worth_resending(reply: Reply) -> bool:
    """A gateway or availability answer (not a redirect): worth another try for a read."""
    return reply.status in _GATEWAY


def nothing_changed(reply: Reply) -> bool:
    """The server said store_unavailable: by the catalog nothing changed, so any request may be
    sent again."""
    error = wire_error(reply)
    return error is not None and error.code == "store_unavailable"


def is_commit_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and answer.get("outcome") in ("committed", "rejected")
