"""A LangGraph worker process for the two-process test: it claims a thread's write ownership and
runs a real three-node StateGraph on it with durability="sync". Its middle node announces that
it is inside (a file) and waits until the test lets it go (another file), so the test can freeze
it there. Prints one JSON line: how the run ended.

    python graph_worker.py URL TOKEN THREAD NAME API WORKDIR START|RESUME
"""

import asyncio
import json
import operator
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Dict, List, TypedDict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from langgraph.graph import END, START, StateGraph  # noqa: E402

import fencegate  # noqa: E402
from fencegate.langgraph import FencedCheckpointSaver, StaleWriteOwnerError  # noqa: E402


class State(TypedDict):
    log: Annotated[List[str], operator.add]


def build(name: str, workdir: Path) -> Any:
    def plan(state: State) -> Dict[str, List[str]]:
        return {"log": [f"planned by {name}"]}

    def think(state: State) -> Dict[str, List[str]]:
        (workdir / f"{name}.inside").write_text("inside")
        # Stands in for a long model call; the test freezes the process here.
        while not (workdir / "go").exists():
            time.sleep(0.02)
        return {"log": [f"thought by {name}"]}

    def answer(state: State) -> Dict[str, List[str]]:
        return {"log": [f"answered by {name}"]}

    builder = StateGraph(State).add_sequence([plan, think, answer])
    return builder.add_edge(START, "plan").add_edge("answer", END)


def outcome(state: Any) -> Dict[str, Any]:
    return {"outcome": "finished", "log": state["log"]}


def refusal(error: StaleWriteOwnerError) -> Dict[str, Any]:
    return {"outcome": "refused", "error": type(error).__name__, "code": error.code}


def run_sync(url: str, token: str, thread_id: str, name: str, workdir: Path, start: bool) -> Any:
    with FencedCheckpointSaver(client=fencegate.Client(url, token), holder=name) as saver:
        owner = saver.claim_write_ownership(thread_id)
        graph = build(name, workdir).compile(checkpointer=owner)
        config = {"configurable": {"thread_id": thread_id}}
        try:
            return outcome(graph.invoke({"log": []} if start else None, config, durability="sync"))
        except StaleWriteOwnerError as error:
            return refusal(error)


async def run_async(
    url: str, token: str, thread_id: str, name: str, workdir: Path, start: bool
) -> Any:
    saver = FencedCheckpointSaver(client=fencegate.AsyncClient(url, token), holder=name)
    async with saver:
        owner = await saver.aclaim_write_ownership(thread_id)
        graph = build(name, workdir).compile(checkpointer=owner)
        config = {"configurable": {"thread_id": thread_id}}
        try:
            state = await graph.ainvoke({"log": []} if start else None, config, durability="sync")
            return outcome(state)
        except StaleWriteOwnerError as error:
            return refusal(error)


def main() -> None:
    url, token, thread_id, name, api, workdir, mode = sys.argv[1:8]
    args = (url, token, thread_id, name, Path(workdir), mode == "START")
    if api == "async":
        result = asyncio.run(run_async(*args))
    else:
        result = run_sync(*args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
