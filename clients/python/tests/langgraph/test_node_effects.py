"""stage_effect and await_effect on a real StateGraph under each durability mode, over HTTP: a task
that fails or is interrupted after staging stores no intent and its rerun (same task id) stages
the same key, committed once; a run superseded while its node works commits nothing it staged;
under ``exit`` the effect rides the run's only checkpoint; a later node reads the outcome."""

import json
import operator
import secrets
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any, Dict, Iterator, List, Tuple, TypedDict
from uuid import uuid4

import pytest
from conftest import Tokens, worker_token
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from served import serve

import fencegate
from fencegate import FencegateError
from fencegate.langgraph import (
    StaleWriteOwnerError,
    await_effect,
    stage_effect,
)

DURABILITIES = ["sync", "async", "exit"]


class State(TypedDict, total=False):
    steps: Annotated[List[str], operator.add]
    effect: str
    outcome: str


def build(checkpointer: Any, run: str, staged: List[str], **behaviour: Any) -> Any:
    def plan(state: State) -> Dict[str, Any]:
        return {"steps": [f"plan by {run}"]}

    def act(state: State, config: RunnableConfig) -> Dict[str, Any]:
        key = stage_effect(config, "notify", "crm", {"run": run})
        staged.append(key)
        if behaviour.get("ask"):
            interrupt("approve the notification?")
        failures = behaviour.get("failures")
        if failures and failures[0] > 0:
            failures[0] -= 1
            raise RuntimeError("act failed after staging")
        inside, go = behaviour.get("inside"), behaviour.get("go")
        if inside is not None:
            inside.set()
            go.wait(30)
            staged.append(stage_effect(config, "late", "crm", {"run": run}))
        return {"steps": [f"act by {run}"], "effect": key}

    def report(state: State, config: RunnableConfig) -> Dict[str, Any]:
        outcome = await_effect(config, state["effect"])
        return {"steps": [f"report by {run}"], "outcome": outcome["status"]}

    builder = StateGraph(State)
    builder.add_node("plan", plan)
    builder.add_node("act", act)
    builder.add_node("report", report)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "act")
    builder.add_edge("act", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer)


def intents_of(saver: Any, thread_id: str) -> List[Dict[str, Any]]:
    page = saver.client.list_intents(scope=saver.scope_for(thread_id))
    return list(page["items"] if isinstance(page, dict) else page.items)


def keys_of(intents: List[Any]) -> List[str]:
    return [i["effectKey"] if isinstance(i, dict) else i.effect_key for i in intents]


def config(thread_id: str) -> Dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


@pytest.mark.parametrize("durability", DURABILITIES)
def test_a_task_failing_after_staging_stores_no_intent_and_its_rerun_commits_the_same_key_once(
    saver, durability
):
    thread_id = str(uuid4())
    staged: List[str] = []
    graph = build(saver, "run-1", staged, failures=[1])
    with pytest.raises(RuntimeError, match="act failed after staging"):
        graph.invoke({"steps": ["input"]}, config(thread_id), durability=durability)
    assert intents_of(saver, thread_id) == []

    state = graph.invoke(None, config(thread_id), durability=durability)
    assert state["steps"] == ["input", "plan by run-1", "act by run-1", "report by run-1"]
    assert len(staged) == 2 and staged[0] == staged[1]
    assert keys_of(intents_of(saver, thread_id)) == [staged[0]]
    # Nothing delivers here: the later node reads it pending.
    assert state["outcome"] == "pending"


@pytest.mark.parametrize("durability", DURABILITIES)
def test_an_interrupt_after_staging_drops_the_effect_and_the_resume_commits_the_same_key_once(
    saver, durability
):
    thread_id = str(uuid4())
    staged: List[str] = []
    graph = build(saver, "run-1", staged, ask=True)
    paused = graph.invoke({"steps": ["input"]}, config(thread_id), durability=durability)
    assert len(paused["__interrupt__"]) == 1
    assert intents_of(saver, thread_id) == []

    graph.invoke(Command(resume="yes"), config(thread_id), durability=durability)
    assert staged == [staged[0], staged[0]]
    assert keys_of(intents_of(saver, thread_id)) == [staged[0]]


@pytest.mark.parametrize("durability", DURABILITIES)
def test_a_run_superseded_while_its_node_works_commits_nothing_it_staged(make_saver, durability):
    thread_id = str(uuid4())
    replica_a, replica_b = make_saver(), make_saver()
    owner_a = replica_a.claim_write_ownership(thread_id)
    inside, go = threading.Event(), threading.Event()
    staged_a: List[str] = []
    failure: List[BaseException] = []

    def old_run() -> None:
        graph = build(owner_a, "run-1", staged_a, inside=inside, go=go)
        try:
            graph.invoke({"steps": ["input"]}, config(thread_id), durability=durability)
        except BaseException as error:  # noqa: BLE001 - the test reads what it was
            failure.append(error)

    worker = threading.Thread(target=old_run)
    worker.start()
    assert inside.wait(30)
    owner_b = replica_b.claim_write_ownership(thread_id)
    go.set()
    worker.join(30)
    assert len(failure) == 1 and isinstance(failure[0], StaleWriteOwnerError)

    staged_b: List[str] = []
    build(owner_b, "run-2", staged_b).invoke(
        {"steps": ["again"]}, config(thread_id), durability=durability
    )
    assert staged_a[1] not in keys_of(intents_of(replica_b, thread_id))
    assert keys_of(intents_of(replica_b, thread_id)) == [staged_b[0]]


def test_under_exit_the_effect_rides_the_runs_only_checkpoint(saver, tokens):
    thread_id = str(uuid4())
    staged: List[str] = []
    build(saver, "run-1", staged).invoke({"steps": ["input"]}, config(thread_id), durability="exit")
    intent = saver.client.get_intent(staged[0])
    assert intent is not None and intent["status"] == "pending"
    operator = fencegate.Client(tokens.url, tokens.operator)
    commits = operator.audit(scope=saver.scope_for(thread_id), kind="commit")
    entries = commits["items"] if isinstance(commits, dict) else commits.items
    entry = next(e for e in entries if _field(e, "operationId") == intent["operationId"])
    assert any(_field(r, "name").startswith("cp/") for r in _field(entry, "records"))


def test_stage_effect_refuses_a_call_outside_a_fenced_graph_and_a_bad_target(saver):
    with pytest.raises(FencegateError) as caught:
        stage_effect({"configurable": {}}, "k", "crm", {})
    assert caught.value.code == "invalid_request"
    node = {
        "configurable": {
            "thread_id": "t",
            "checkpoint_ns": "act:task-1",
            "checkpoint_map": {"": "1f0"},
            "__pregel_task_id": "task-1",
            "__pregel_checkpointer": saver,
        }
    }
    with pytest.raises(FencegateError) as bad:
        stage_effect(node, "k", "no spaces", {})
    assert bad.value.code == "invalid_request" and bad.value.details == {"field": "target"}
    for i in range(16):
        stage_effect(node, f"k{i}", "crm", {"i": i})
    stage_effect(node, "k3", "crm", {"again": True})
    with pytest.raises(FencegateError) as many:
        stage_effect(node, "k16", "crm", {})
    assert many.value.details == {"field": "key"}


def _field(item: Any, name: str) -> Any:
    if isinstance(item, dict):
        return item[name]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return getattr(item, snake)


# A real delivery: a server running the fenced dispatcher, and a webhook receiver counting POSTs


class Receiver(BaseHTTPRequestHandler):
    """Answers every POST with a providerRef and keeps what it was sent, by Idempotency-Key."""

    received: Dict[str, List[Any]] = {}

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        key = self.headers["idempotency-key"]
        self.received.setdefault(key, []).append(body)
        answer = json.dumps({"providerRef": f"crm-{len(self.received)}"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def delivering() -> Iterator[Tuple[Tokens, Dict[str, List[Any]]]]:
    """A server whose dispatcher delivers the target ``crm`` to a local receiver, and a tenant."""
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    with tempfile.TemporaryDirectory(prefix="fencegate-targets-") as work:
        targets = Path(work) / "targets.json"
        targets.write_text(json.dumps({"targets": {"crm": {"type": "webhook", "url": hook}}}))
        with serve("--dispatch", "--targets", str(targets), "--dispatch-poll-ms", "50") as server:
            admin = fencegate.Client(server.url, server.admin_token)
            tenant = "py-" + secrets.token_hex(6)
            operator = admin.create_token(tenant=tenant, role="operator", label="operator")
            tokens = Tokens(server.url, worker_token(admin, tenant), operator["token"])
            yield tokens, Receiver.received
    receiver.shutdown()


def test_the_dispatcher_delivers_a_rerun_tasks_effect_once(delivering: Any) -> None:
    tokens, received = delivering
    saver = tokens.saver()
    try:
        thread_id = str(uuid4())
        staged: List[str] = []
        graph = build(saver, "run-1", staged, failures=[1])
        with pytest.raises(RuntimeError, match="act failed after staging"):
            graph.invoke({"steps": ["input"]}, config(thread_id), durability="sync")
        graph.invoke(None, config(thread_id), durability="sync")
        # The same task id again: the same key, staged twice, committed once.
        assert len(staged) == 2 and staged[0] == staged[1]
        node = {"configurable": {"__pregel_checkpointer": saver}}
        outcome = await_effect(node, staged[0], timeout_ms=20_000)
        assert outcome["status"] == "delivered"
        assert outcome["provider_ref"].startswith("crm-")
        # Delivered by the dispatcher, once, with the effect key as the Idempotency-Key.
        assert keys_of(intents_of(saver, thread_id)) == [staged[0]]
        assert received[staged[0]] == [{"run": "run-1"}]
    finally:
        saver.close()
