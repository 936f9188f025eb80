"""How the clients honour a rate limit: an answer 429 changed nothing, so the same request (a
commit included) is sent again once the answer says it fits; it is never settled or abandoned
because of it. Each wait is what the answer asks: fencegate's ``details.retryAfterMs``, or, when
the body gives none, the standard ``Retry-After`` header (a number of seconds, or an HTTP date),
which is all a proxy or an API gateway with a rate limit of its own sends; else 1 s for fencegate's
``rate_limited``, and no wait for another 429 without the header; at least ``MIN_WAIT_S`` and at
most ``MAX_WAIT_S``. Past the client's ``rate_limit_wait`` seconds since the first send of one
exchange, the 429 is its answer (``RateLimitedError``, nothing changed)."""

import math
import random
import re
import time
from datetime import timezone
from email.utils import parsedate_to_datetime
from typing import Optional

from ._wire import Reply

#: The longest single wait, whatever the server asks.
MAX_WAIT_S = 10.0
#: The wait when the answer says none.
DEFAULT_WAIT_S = 1.0
#: The shortest wait: an answer that asks for none (``Retry-After: 0``, a date already past) is
#: not sent again at once, so a broken or hostile proxy cannot make the client spin.
MIN_WAIT_S = 0.05
#: The seconds one exchange may take in all while rate limited, by default.
DEFAULT_RATE_LIMIT_WAIT_S = 60.0

_SECONDS = re.compile(r"[0-9]+")


def rate_limit_pause(reply: Reply, waited: float, budget: float) -> Optional[float]:
    """Seconds to wait before sending the same request again, or None to take ``reply`` as it
    is (not rate limited, or the budget is spent); ``waited``: seconds since the first send."""
    if reply.status != 429:
        return None
    body = reply.json()
    error = body.get("error") if isinstance(body, dict) else None
    # fencegate's own rate_limited, or any 429 with a Retry-After (a proxy's or a gateway's).
    ours = isinstance(error, dict) and error.get("code") == "rate_limited"
    details = error.get("details") if ours and isinstance(error, dict) else None
    asked = details.get("retryAfterMs") if isinstance(details, dict) else None
    seconds: Optional[float] = None
    if isinstance(asked, (int, float)) and not isinstance(asked, bool):
        if math.isfinite(asked) and asked >= 0:
            seconds = asked / 1000
    if seconds is None:
        seconds = retry_after_seconds(reply.retry_after)
    if seconds is None:
        if not ours:
            return None
        seconds = DEFAULT_WAIT_S
    wait = min(MAX_WAIT_S, max(MIN_WAIT_S, seconds))
    # A little jitter, so callers refused together do not all come back at one instant.
    wait += random.random() * min(0.05, wait)
    return None if waited + wait > budget else wait


def retry_after_seconds(value: Optional[str]) -> Optional[float]:
    """The seconds a ``Retry-After`` header asks for: a whole number of seconds, or the time
    until an HTTP date (0 once it has passed); None when there is none or it is neither."""
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):  # TypeError: Python 3.9's word
        return None
    if when.tzinfo is None:  # an HTTP date is in GMT
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - time.time())
