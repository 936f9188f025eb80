"""What both transports share: how a request is encoded, what came back, and how a failed
exchange is classified.

A request that never reached the server (connection refused, unknown host, a TLS certificate the
client does not accept) is always safe to send again; one that was sent and then lost (reset,
timeout) may have taken effect.
"""

import json
import ssl
from dataclasses import dataclass
from typing import Any, Optional

NOT_SENT = "not_sent"
LOST = "lost"

#: The most bytes of an answer's body a client reads unless told otherwise (``max_answer_bytes``).
MAX_ANSWER_BYTES = 64 * 1024 * 1024
#: The server's default body limit (1 MiB), which a batch of commits is split to stay within
#: unless told otherwise (``max_body_bytes``).
MAX_BODY_BYTES = 1024 * 1024


class TransportError(Exception):
    """No answer: ``failure`` is NOT_SENT (nothing reached the server) or LOST (maybe it did).

    ``unanswered``: the connection ended (closed or reset, not timed out) before any byte of an
    answer came, which on a connection kept open since an earlier exchange is what a connection
    dropped while idle looks like."""

    def __init__(self, failure: str, message: str, unanswered: bool = False) -> None:
        super().__init__(message)
        self.failure = failure
        self.unanswered = unanswered


@dataclass
class Reply:
    status: int
    text: str
    content_type: str
    #: Why the body could not be read (it was too long), completing "was answered HTTP <status>".
    unreadable: Optional[str] = None
    #: The answer's Retry-After header, as sent; None without one.
    retry_after: Optional[str] = None

    def json(self) -> Any:
        if self.text == "" or "json" not in self.content_type:
            return None
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def encode_body(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def reply_of(
    status: int, raw: bytes, content_type: Optional[str], retry_after: Optional[str] = None
) -> Reply:
    return Reply(
        status=status,
        text=raw.decode("utf-8", "replace"),
        content_type=content_type or "",
        retry_after=retry_after,
    )


def too_long(status: int, content_type: Optional[str], max_bytes: int) -> Reply:
    """The reply of an answer whose body was longer than the client reads: status alone."""
    return Reply(
        status=status,
        text="",
        content_type=content_type or "",
        unreadable=f"with a body over {max_bytes} bytes, the most this client reads "
        "(max_answer_bytes)",
    )


def tls_refusal(error: BaseException) -> Optional[TransportError]:
    """NOT_SENT when ``error`` (or what caused it) is a failed certificate verification.

    Verification is part of the TLS handshake, which ends before the request is written: nothing
    was sent, so even a write is safe to send again, and its outcome is not unknown.
    """
    seen: Optional[BaseException] = error
    for _ in range(5):  # the transports wrap the ssl error a few levels deep
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            reason = seen.verify_message or seen.reason or "certificate verify failed"
            return TransportError(
                NOT_SENT,
                f"the server's TLS certificate was not accepted ({reason}); nothing was sent",
            )
        seen = seen.__cause__ or seen.__context__ or getattr(seen, "reason", None)
        if not isinstance(seen, BaseException):
            return None
    return None
