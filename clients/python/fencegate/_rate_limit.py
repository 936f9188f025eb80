"""How the clients honour the server's per-tenant rate: an answer 429 ``rate_limited`` changed
nothing, so the same request (a commit included) is sent again once the server says it fits; it is
never settled or abandoned because of it. Each wait is what the answer asks
(``details.retryAfterMs``), at most ``MAX_WAIT_S``; past the client's ``rate_limit_wait`` seconds
of waiting for one exchange, the 429 is its answer (``RateLimitedError``, nothing changed)."""

import random
from typing import Optional

from ._wire import Reply

#: The longest single wait, whatever the server asks.
MAX_WAIT_S = 10.0
#: The waiting one exchange may do in all by default.
DEFAULT_RATE_LIMIT_WAIT_S = 60.0


def rate_limit_pause(reply: Reply, waited: float, budget: float) -> Optional[float]:
    """Seconds to wait before sending the same request again, or None to take ``reply`` as it
    is (not rate limited, or the budget is spent)."""
    if reply.status != 429:
        return None
    body = reply.json()
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") != "rate_limited":
        return None
    details = error.get("details")
    asked = details.get("retryAfterMs") if isinstance(details, dict) else None
    seconds = asked / 1000 if isinstance(asked, (int, float)) and asked >= 0 else 1.0
    wait = min(MAX_WAIT_S, max(0.001, seconds))
    # A little jitter, so callers refused together do not all come back at one instant.
    wait += random.random() * min(0.05, wait)
    return None if waited + wait > budget else wait
