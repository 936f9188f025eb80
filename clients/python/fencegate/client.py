"""fencegate.Client: the fencegate HTTP API over the standard library, blocking.

Every method runs the steps of one function of _api.py (request, answer mapping, retry rules
and the settling of an unknown commit outcome) with blocking I/O; ``fencegate.AsyncClient`` runs
the same steps as coroutines. The methods themselves are written in _methods.py.
"""

import time

from ._call_steps import Exchange
from ._http import exchange
from ._methods import BlockingMethods
from ._rate_limit import rate_limit_pause
from ._wire import Reply


class Client(BlockingMethods):
    """A worker, operator or admin token of one tenant, talking to one fencegate server."""

    def __repr__(self) -> str:  # never the token
        return f"fencegate.Client({self.base_url!r})"

    def _exchange(self, step: Exchange) -> Reply:
        # A connection per exchange: none is kept open between calls, so none can be dropped
        # while idle, and a call from any thread is its own.
        # The rate limit's budget runs from the first send, the exchanges included.
        started = time.monotonic()
        while True:
            reply = exchange(
                self._endpoint,
                step.method,
                step.path,
                self._token,
                step.body,
                self.timeout,
                self.max_answer_bytes,
            )
            pause = rate_limit_pause(reply, time.monotonic() - started, self.rate_limit_wait)
            if pause is None:
                return reply
            time.sleep(pause)
