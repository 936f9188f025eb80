"""A server certificate the client does not accept ends the exchange in the TLS handshake, before
the request is written: it is "not sent" (fencegate could not be reached), never an unknown
outcome, even for a write. With both clients, against a local TLS server with a self-signed
certificate."""

import shutil
import socket
import ssl
import subprocess
import threading
from typing import List

import pytest

import fencegate
from fencegate import Write

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


class SelfSignedServer:
    """Accepts TLS connections with a certificate no client trusts; records any request bytes."""

    def __init__(self, directory) -> None:
        cert, key = directory / "cert.pem", directory / "key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(cert, key)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"https://127.0.0.1:{self._listener.getsockname()[1]}"
        self.handshakes = 0
        self.received: List[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                raw, _ = self._listener.accept()
            except OSError:
                return
            self.handshakes += 1
            try:
                with self._context.wrap_socket(raw, server_side=True) as conn:
                    conn.settimeout(5)
                    data = conn.recv(65536)
                    if data:
                        self.received.append(data)
            except (OSError, ssl.SSLError):
                pass  # the client refused the certificate

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def untrusted(tmp_path):
    server = SelfSignedServer(tmp_path)
    yield server
    server.close()


def test_a_refused_certificate_on_a_write_is_not_an_unknown_outcome(untrusted, connect):
    client = connect(untrusted.url, "fg_secret", retries=1)
    with pytest.raises(fencegate.StoreUnavailableError) as refused:
        client.acquire("wf-t1/memory", holder="w", ttl_ms=30_000)
    assert not isinstance(refused.value, fencegate.OutcomeUnknownError)
    assert "certificate was not accepted" in refused.value.message
    assert "nothing was sent" in refused.value.message
    assert untrusted.handshakes >= 1 and untrusted.received == []


def test_a_refused_certificate_on_a_commit_is_not_settled_or_guessed(untrusted, connect):
    client = connect(untrusted.url, "fg_secret", retries=1)
    with pytest.raises(fencegate.StoreUnavailableError) as refused:
        client.commit("wf-t2/memory", 1, "t2", writes=[Write("summary", 0, "v")])
    assert "certificate was not accepted" in refused.value.message
    assert "fg_secret" not in str(refused.value)
    assert untrusted.received == []
