"""Where a client's server is, the way to it, and the bytes of a request to it, for both
transports.

The way is direct, or through the proxy the environment names as the standard library reads it
(``urllib.request.getproxies`` and ``proxy_bypass``): HTTP_PROXY for an http:// server, to which
each request goes with its full URL; HTTPS_PROXY for an https:// one, to which a CONNECT opens a
tunnel with TLS to the server inside it; a host NO_PROXY names is reached directly. The user and
password of the proxy's URL go in Proxy-Authorization. The environment is read once, when the
client is made.
"""

import base64
import ssl
import urllib.request
from dataclasses import dataclass
from typing import Any, Optional, Tuple
from urllib.parse import unquote, urlsplit

from ._wire import encode_body

_WITH_BODY = ("POST", "PUT", "PATCH")


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    #: The Proxy-Authorization header line, when the proxy's URL carries a user.
    authorization: bytes


class Endpoint:
    """One server by its base URL: what to connect to and what to send it."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the server URL must be http:// or https:// with a host: {base_url}")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        default_port = 443 if self.tls else 80
        self.port = parts.port or default_port
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._authority = f"{host}:{self.port}"
        self._host_header = host if parts.port in (None, default_port) else self._authority
        self._prefix = parts.path.rstrip("/")
        self.proxy = _proxy_for(parts.scheme, f"{self.host}:{self.port}")
        if self.proxy is not None and not self.tls:
            # Through a proxy, an http:// request names its whole URL.
            self._prefix = f"http://{self._host_header}{self._prefix}"
        self._ssl: Optional[ssl.SSLContext] = None
        #: The header lines every request of a token carries, built once.
        self._headers: Optional[Tuple[Optional[str], bytes]] = None

    @property
    def address(self) -> Tuple[str, int]:
        """Where the connection goes: the proxy, or the server."""
        if self.proxy is not None:
            return (self.proxy.host, self.proxy.port)
        return (self.host, self.port)

    @property
    def tunnelled(self) -> bool:
        """TLS to the server through a proxy's CONNECT tunnel."""
        return self.tls and self.proxy is not None

    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def tunnel_request(self) -> bytes:
        assert self.proxy is not None
        return (
            f"CONNECT {self._authority} HTTP/1.1\r\nhost: {self._authority}\r\n".encode("latin-1")
            + self.proxy.authorization
            + b"\r\n"
        )

    def request(
        self, method: str, path: str, token: Optional[str], body: Any, close: bool = False
    ) -> bytes:
        """The bytes of one request; ``close`` asks the server to close the connection after it."""
        data = None if body is None else encode_body(body)
        head = f"{method} {self._prefix}{path} HTTP/1.1\r\n".encode("latin-1")
        head += self._common_headers(token)
        if close:
            head += b"connection: close\r\n"
        if data is not None:
            length = b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(data)
            return head + length + data
        if method in _WITH_BODY:
            return head + b"content-length: 0\r\n\r\n"
        return head + b"\r\n"

    def _common_headers(self, token: Optional[str]) -> bytes:
        if self._headers is None or self._headers[0] != token:
            lines = [f"host: {self._host_header}", "accept: application/json"]
            if token is not None:
                lines.append(f"authorization: Bearer {token}")
            text = "\r\n".join(lines) + "\r\n"
            proxy = b"" if self.proxy is None or self.tls else self.proxy.authorization
            self._headers = (token, text.encode("latin-1") + proxy)
        return self._headers[1]


def _proxy_for(scheme: str, authority: str) -> Optional[Proxy]:
    """The proxy the environment names for ``scheme``, unless NO_PROXY names the host."""
    url = urllib.request.getproxies().get(scheme)
    if not url or urllib.request.proxy_bypass(authority):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(
            f"the {scheme} proxy of the environment must be an http:// URL with a host: {url}"
        )
    authorization = b""
    if parts.username is not None:
        user = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        credentials = base64.b64encode(user.encode("utf-8"))
        authorization = b"proxy-authorization: Basic " + credentials + b"\r\n"
    return Proxy(parts.hostname, parts.port or 80, authorization)
