"""A request named by its route (_route_table.py): the route's method, its path with each
``:param`` filled, checked and percent-encoded, and how it may be resent, from its retry class."""

import re
from typing import Mapping, NamedTuple, Optional

from . import _requests as _req
from ._route_table import ROUTES

#: How a request may be retried after its reply was lost.
READ = "read"  # sent again
IDEMPOTENT = "idempotent"  # a write that cannot apply twice: sent again
WRITE = "write"  # may have taken effect: never sent again after a lost reply

#: The resend rule of each retry class but ``idempotent-when-timed`` (see ``resend_kind``). A
#: commit has its own steps (its stored outcome is read first); as a plain request it is a write.
_KIND_OF_RETRY = {
    "read": READ,
    "idempotent": IDEMPOTENT,
    "commit": WRITE,
    "lease": WRITE,
    "none": WRITE,
}

_PARAM = re.compile(r":([A-Za-z0-9_]+)")


class RouteRequest(NamedTuple):
    method: str
    #: The path and query string, percent-encoded.
    path: str
    #: READ, IDEMPOTENT or WRITE.
    kind: str


def route(
    name: str,
    params: Optional[Mapping[str, str]] = None,
    query: str = "",
    timed: bool = False,
) -> RouteRequest:
    """The request of route ``name``; ``timed`` (for ``idempotent-when-timed``): every job event
    carries its own ``at``."""
    entry = ROUTES[name]
    return RouteRequest(
        method=entry.method,
        path=route_path(name, params or {}) + query,
        kind=resend_kind(entry.retry, timed),
    )


def route_path(name: str, params: Mapping[str, str]) -> str:
    """The route's path with each ``:param`` filled by its value as one path segment."""

    def fill(match: "re.Match[str]") -> str:
        param = match.group(1)
        if param not in params:
            raise TypeError(f"route {name} needs the path value {param}")
        return _req.segment(params[param], param)

    return _PARAM.sub(fill, ROUTES[name].path)


def resend_kind(retry: str, timed: bool) -> str:
    """How a request of retry class ``retry`` may be resent: an event stamped by the store
    could hide a newer one, so job events are idempotent only when each carries ``at``."""
    if retry == "idempotent-when-timed":
        return IDEMPOTENT if timed else WRITE
    return _KIND_OF_RETRY[retry]
