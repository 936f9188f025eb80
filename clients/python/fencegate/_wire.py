"""What both transports share: how a request is encoded, what came back, and how a failed
exchange is classified.

A request that never reached the server (connection refused, unknown host, a TLS certificate the
client does not accept) is always safe to send again; one that was sent and then lost (reset,
timeout) may have taken effect.
"""

import json
import ssl
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

NOT_SENT = "not_sent"
LOST = "lost"


class TransportError(Exception):
    """No answer: ``failure`` is NOT_SENT (nothing reached the server) or LOST (maybe it did)."""

    def __init__(self, failure: str, message: str) -> None:
        super().__init__(message)
        self.failure = failure


@dataclass
class Reply:
    status: int
    text: str
    content_type: str

    def json(self) -> Any:
        if self.text == "" or "json" not in self.content_type:
            return None
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def encode_request(token: Optional[str], body: Any) -> Tuple[Dict[str, str], Optional[bytes]]:
    """The headers and body bytes of a request."""
    headers: Dict[str, str] = {"accept": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if body is None:
        return headers, None
    headers["content-type"] = "application/json"
    return headers, encode_body(body)


def encode_body(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def reply_of(status: int, raw: bytes, content_type: Optional[str]) -> Reply:
    return Reply(status=status, text=raw.decode("utf-8", "replace"), content_type=content_type or "")


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
                NOT_SENT, f"the server's TLS certificate was not accepted ({reason}); nothing was sent"
            )
        seen = seen.__cause__ or seen.__context__ or getattr(seen, "reason", None)
        if not isinstance(seen, BaseException):
            return None
    return None
