"""Every route of the server's /openapi.json has a client method, and every method its route."""

import fencegate


def test_every_openapi_route_has_a_client_method(server, tenant):
    document = tenant.worker().openapi()
    served = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }
    covered = set(fencegate.Client.ROUTES.values())
    missing = sorted(served - covered)
    assert missing == [], f"routes without a method in fencegate.Client: {missing}"
    for name in fencegate.Client.ROUTES:
        assert callable(getattr(fencegate.Client, name)), f"Client.ROUTES names {name}"
