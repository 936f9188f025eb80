"""The base of every fencegate error, as the server's catalog describes it (see errors.py)."""

from typing import Any, Dict, Mapping, Optional


class FencegateError(Exception):
    """A refusal or failure with one code of the catalog (docs/errors.md).

    ``code`` is the catalog code, ``details`` what decided it (current fence, holder, ...),
    ``retryable`` whether sending the same request again can succeed, ``http_status`` the status
    the server answers it with.
    """

    code: str = "internal_error"
    http_status: int = 500
    retryable: bool = False

    def __init__(
        self,
        message: str,
        details: Optional[Mapping[str, Any]] = None,
        code: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: Dict[str, Any] = dict(details or {})
        if code is not None and code != type(self).code:
            # A code this client does not know yet (a newer server): keep it as answered.
            self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, details={self.details!r})"
