"""Every route of the server's /openapi.json has a client method, and every method its route."""

import re

import fencegate
from fencegate._route_table import ROUTES


def test_every_openapi_route_has_a_client_method(server, tenant):
    document = tenant.worker().openapi()
    served = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }
    covered = set()
    for name, route_name in fencegate.Client.ROUTES.items():
        assert callable(getattr(fencegate.Client, name)), f"Client.ROUTES names {name}"
        route = ROUTES[route_name]
        covered.add((route.method, re.sub(r":([A-Za-z0-9_]+)", r"{\1}", route.path)))
    missing = sorted(served - covered)
    assert missing == [], f"routes without a method in fencegate.Client: {missing}"
