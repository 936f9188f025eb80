"""Both clients take their proxy from the environment as the standard library reads it:
HTTP_PROXY for an http:// server, HTTPS_PROXY for an https:// one (a CONNECT tunnel, TLS to the
server inside it), user and password of the proxy's URL as Proxy-Authorization, and a host named
in NO_PROXY reached directly. The environment is read when the client is made. Against the real
server, through a forward proxy of the tests (forward_proxy.py)."""

import shutil

import pytest

from forward_proxy import ForwardProxy, TlsFront, basic

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


@pytest.fixture
def environment(monkeypatch):
    """The proxy variables cleared for the test, set by it as it needs."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


@pytest.fixture
def forward_proxy():
    proxy = ForwardProxy()
    yield proxy
    proxy.close()


def test_http_proxy_carries_the_requests_with_its_credentials(
    environment, forward_proxy, tenant, connect
):
    environment.setenv("HTTP_PROXY", forward_proxy.url.replace("://", "://agent:s%40cret@"))
    client = connect(tenant.server.url, tenant.worker_token)
    assert client.get_record("wf-x1/memory", "summary").revision == 0
    assert client.acquire("wf-x1/memory", holder="w", ttl_ms=30_000).fence == 1
    assert forward_proxy.requests == [
        f"GET {tenant.server.url}/v1/scopes/wf-x1%2Fmemory/records/summary HTTP/1.1",
        f"POST {tenant.server.url}/v1/leases/acquire HTTP/1.1",
    ]
    assert forward_proxy.authorizations == [basic("agent", "s@cret")] * 2


def test_a_host_in_no_proxy_is_reached_directly(environment, forward_proxy, tenant, connect):
    environment.setenv("HTTP_PROXY", forward_proxy.url)
    environment.setenv("NO_PROXY", "localhost,127.0.0.1")
    client = connect(tenant.server.url, tenant.worker_token)
    assert client.get_record("wf-x2/memory", "summary").revision == 0
    assert forward_proxy.requests == []


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_https_proxy_tunnels_to_the_server(environment, forward_proxy, tenant, connect, tmp_path):
    front = TlsFront(tenant.server.url, tmp_path)
    try:
        environment.setenv("SSL_CERT_FILE", str(front.cert))
        environment.setenv("HTTPS_PROXY", forward_proxy.url)
        client = connect(front.url, tenant.worker_token)
        assert client.get_record("wf-x3/memory", "summary").revision == 0
        assert client.acquire("wf-x3/memory", holder="w", ttl_ms=30_000).fence == 1
    finally:
        front.close()
    host = front.url.split("//", 1)[1]
    assert forward_proxy.requests == [f"CONNECT {host} HTTP/1.1"] * 2
