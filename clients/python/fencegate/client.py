"""fencegate.Client: the fencegate HTTP API over the standard library, blocking.

Every method is one plan of _api.py (request, answer mapping, retry rules and the settling of an
unknown commit outcome), run here with blocking I/O; ``fencegate.AsyncClient`` runs the same
plans as coroutines.
"""

from typing import Any, Callable

from ._api import ApiPlans, install_calls
from ._http import exchange
from ._plans import Exchange, run_sync
from ._wire import Reply


class Client(ApiPlans):
    """A worker, operator or admin token of one tenant, talking to one fencegate server."""

    def __repr__(self) -> str:  # never the token
        return f"fencegate.Client({self.base_url!r})"

    def _exchange(self, step: Exchange) -> Reply:
        # A connection per exchange: none is kept open between calls, so none can be dropped
        # while idle, and a call from any thread is its own.
        return exchange(
            self._endpoint,
            step.method,
            step.path,
            self._token,
            step.body,
            self.timeout,
            self.max_answer_bytes,
        )


def _blocking(plan: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Client, *args: Any, **kwargs: Any) -> Any:
        return run_sync(plan(self, *args, **kwargs), self._exchange)

    return call


install_calls(Client, _blocking)
