"""The client's calls follow the server's route table (fencegate/_route_table.py, generated from
src/route-table.ts): each sends its route's method and path, and is resent after a lost reply as
its route's retry class allows; every route of the table has a method; and the lease keepers end
a lease on exactly the renewal codes of the error catalog."""

import importlib.util
import inspect
import time
from typing import Any, Dict, Union
from urllib.parse import quote

import pytest

import fencegate
from conftest import HERE
from fencegate import _api
from fencegate._base import FencegateError
from fencegate._call_steps import Exchange, Pause
from fencegate._client_base import ClientBase
from fencegate._route_table import (
    COMMIT_AUTHORITY_LOST_CODES,
    RENEWAL_LEASE_LOST_CODES,
    RETRY_CLASSES,
    ROUTES,
)
from fencegate._routes import IDEMPOTENT, READ, WRITE, resend_kind, route, route_path
from fencegate._wire import LOST, TransportError, too_long
from fencegate.errors import InternalError, InvalidRequestError, OutcomeUnknownError
from fencegate.lease import LeaseRules

#: Routes of the table the client deliberately has no method for, each with the reason.
WITHOUT_A_METHOD: Dict[str, str] = {}

#: Calls whose retry class the tests below cannot watch, each with the reason.
SENT_ONCE = {"readyz": "asks whether the server reaches its store now: any failure answers False"}

#: A value for each required argument of the calls; the path values hold characters that must be
#: percent-encoded, so a path built by hand would not match.
ARGUMENTS: Dict[str, Any] = {
    "scope": "wf-1/memory",
    "name": "notes/today",
    "operation_id": "op:1/a",
    "effect_key": "mail/1",
    "cutover_id": "cut/1",
    "token_id": "tok_1",
    "holder": "worker-1",
    "ttl_ms": 30_000,
    "fence": 3,
    "committed_from": 2,
    "dispatcher": "mailer",
    "limit": 5,
    "claim_fence": 2,
    "outcome": "delivered",
    "version": "v1",
    "to_policy": "v2",
    "from_policy": "v1",
    "steps": [5, 50, 100],
    "rollout_id": "ramp/v2@1",
    "events": [{"job_id": "job-1", "state": "active", "at": 1_000}],
    "tenant": "acme",
    "role": "worker",
    # Two, so that they go together (a commit alone goes over the commit route).
    "commits": [
        {"scope": "wf-1/memory", "fence": 3, "operation_id": "op:1/a"},
        {"scope": "wf-1/memory", "fence": 3, "operation_id": "op:1/b"},
    ],
}

#: The argument that gives each path value of the table.
PATH_VALUE_ARGUMENT = {
    "scope": "scope",
    "name": "name",
    "operationId": "operation_id",
    "effectKey": "effect_key",
    "cutoverId": "cutover_id",
    "rolloutId": "rollout_id",
    "id": "token_id",
}


def load_writer():
    path = HERE.parent / "scripts" / "write_route_table.py"
    spec = importlib.util.spec_from_file_location("write_route_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def steps_of(method: str, **changed: Any):
    """The steps of the call behind ``method``, with ``ARGUMENTS`` for what it requires."""
    function = getattr(_api, method)
    parameters = list(inspect.signature(function).parameters.values())[1:]
    arguments = {p.name: ARGUMENTS[p.name] for p in parameters if p.default is p.empty}
    api = ClientBase("http://127.0.0.1:9", "token", retries=2)
    return function(api, **{**arguments, **changed})


def expected_path(route_name: str) -> str:
    path = ROUTES[route_name].path
    for param in ROUTES[route_name].params:
        value = quote(ARGUMENTS[PATH_VALUE_ARGUMENT[param]], safe="")
        path = path.replace(f":{param}", value)
    return path


def next_exchange(steps, send: Any = None, throw: Any = None) -> Union[Exchange, BaseException]:
    """The call's next exchange after a reply (``send``) or a failure (``throw``), or what it
    raised instead."""
    try:
        step = steps.throw(throw) if throw is not None else steps.send(send)
        while isinstance(step, Pause):
            step = steps.send(None)
        return step
    except FencegateError as error:
        return error


def test_the_route_table_module_is_current():
    writer = load_writer()
    written = (HERE.parent / "fencegate" / "_route_table.py").read_text(encoding="utf-8")
    assert written == writer.render(writer.table_from_typescript()), (
        "fencegate/_route_table.py differs from src/route-table.ts and src/errors.ts: "
        "run `python clients/python/scripts/write_route_table.py`"
    )


def test_every_route_of_the_table_has_a_client_method():
    called = set(ClientBase.ROUTES.values())
    assert called <= set(ROUTES), f"ClientBase.ROUTES names unknown routes: {called - set(ROUTES)}"
    uncalled = set(ROUTES) - called - set(WITHOUT_A_METHOD)
    assert uncalled == set(), f"routes without a method in fencegate.Client: {sorted(uncalled)}"
    for method in ClientBase.ROUTES:
        assert callable(getattr(fencegate.Client, method)), method


@pytest.mark.parametrize("method", list(ClientBase.ROUTES))
def test_each_call_sends_its_routes_method_and_path(method):
    route_name = ClientBase.ROUTES[method]
    exchange = next(steps_of(method))
    assert isinstance(exchange, Exchange)
    assert exchange.method == ROUTES[route_name].method
    assert exchange.path.split("?")[0] == expected_path(route_name)


@pytest.mark.parametrize("method", [m for m in ClientBase.ROUTES if m not in SENT_ONCE])
def test_each_call_is_resent_as_its_routes_retry_class_allows(method):
    route_name = ClientBase.ROUTES[method]
    retry = ROUTES[route_name].retry
    if retry == "idempotent-when-timed":
        untimed = [{"job_id": "job-1", "state": "active"}]
        check_resending(method, route_name, IDEMPOTENT)
        check_resending(method, route_name, WRITE, events=untimed)
    elif method == "commit_many":
        steps = steps_of(method)
        sent = next(steps)
        assert sent.resendable
        after = next_exchange(steps, throw=TransportError(LOST, "connection reset"))
        # The same batch again, not a lookup per commit: each operationId applies it once.
        assert isinstance(after, Exchange)
        assert (after.method, after.path, after.body) == (sent.method, sent.path, sent.body)
    elif retry == "commit":
        steps = steps_of(method)
        sent = next(steps)
        assert sent.resendable  # its operationId applies it at most once
        after = next_exchange(steps, throw=TransportError(LOST, "connection reset"))
        # The stored outcome decides before anything is sent again.
        path = route_path("getOperation", {"operationId": ARGUMENTS["operation_id"]})
        assert (after.method, after.path) == ("GET", path)
    else:
        check_resending(method, route_name, resend_kind(retry, timed=False))


def check_resending(method: str, route_name: str, kind: str, **changed: Any) -> None:
    steps = steps_of(method, **changed)
    sent = next(steps)
    assert sent.resendable == (kind != WRITE)
    after = next_exchange(steps, throw=TransportError(LOST, "connection reset"))
    if kind == WRITE:
        assert isinstance(after, OutcomeUnknownError), f"{method} may have taken effect"
    else:
        assert isinstance(after, Exchange), f"{method} is sent again after a lost reply"
        assert (after.method, after.path) == (sent.method, sent.path)
    # A body too long to read says nothing: on a read an error, on a write an unknown outcome.
    steps = steps_of(method, **changed)
    next(steps)
    refused = next_exchange(steps, send=too_long(200, "application/json", 10))
    assert type(refused) is (InternalError if kind == READ else OutcomeUnknownError)


def test_every_retry_class_has_a_resend_rule():
    assert {retry: resend_kind(retry, timed=True) for retry in RETRY_CLASSES} == {
        "read": READ,
        "idempotent": IDEMPOTENT,
        "idempotent-when-timed": IDEMPOTENT,
        "commit": WRITE,
        "lease": WRITE,
        "none": WRITE,
    }
    assert resend_kind("idempotent-when-timed", timed=False) == WRITE


def test_a_path_value_is_checked_and_stays_inside_its_segment():
    request = route("getRecord", {"scope": "wf-1/memory", "name": "a:b@c"}, "?limit=1")
    assert request == ("GET", "/v1/scopes/wf-1%2Fmemory/records/a%3Ab%40c?limit=1", READ)
    with pytest.raises(InvalidRequestError, match="effectKey must be 1 to 256 characters"):
        route("getIntent", {"effectKey": ".."})
    with pytest.raises(TypeError, match="needs the path value name"):
        route("getRecord", {"scope": "s"})


def rules() -> LeaseRules:
    return LeaseRules("wf-1/memory", "worker-1", 60_000, None, None, None)


@pytest.mark.parametrize("code", sorted(RENEWAL_LEASE_LOST_CODES))
def test_a_renewal_refused_with_a_lease_lost_code_ends_the_lease(code):
    error = fencegate.ERROR_CLASSES[code]("refused")
    assert rules()._renew_failure_ends_lease(error, time.monotonic()) is error


@pytest.mark.parametrize(
    "code", sorted(COMMIT_AUTHORITY_LOST_CODES - RENEWAL_LEASE_LOST_CODES) + ["store_unavailable"]
)
def test_a_renewal_refused_otherwise_is_tried_again_within_the_ttl(code):
    # A renewal never answers the commit-only codes; any other refusal leaves the lease as it was.
    error = fencegate.ERROR_CLASSES[code]("refused")
    assert rules()._renew_failure_ends_lease(error, time.monotonic()) is None
