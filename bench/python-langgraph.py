"""The Python half of `npm run bench -- python-langgraph`: one 3-node LangGraph graph run on
LangGraph's InMemorySaver (the baseline) and on fencegate.langgraph.FencedCheckpointSaver (async,
through fencegate.AsyncClient against the server bench/python-langgraph.ts started), in one
process, under LangGraph's default durability ("async") and under "sync". Rounds interleave the
two savers; each measurement runs the graph again and again on one thread. A step's time is the
gap between two updates of `graph.astream`; steps/s counts every step of the measured runs; the
driver's CPU time per step (user + system, this process only) is less noisy than the rates on a
busy machine. The fenced saver's client counts its requests to the server and its commits per run
of the graph. Prints one JSON object.

    python bench/python-langgraph.py URL WORKER_TOKEN SECONDS ROUNDS
"""

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

import fencegate  # noqa: E402
from fencegate.langgraph import FencedCheckpointSaver  # noqa: E402

WARM_UP_RUNS = 20


class CountingClient(fencegate.AsyncClient):
    """An AsyncClient that counts its requests to the server, and among them its commits."""

    requests = 0
    commits = 0

    async def _exchange(self, step: Any) -> Any:
        self.requests += 1
        if step.path == "/v1/commit":
            self.commits += 1
        return await super()._exchange(step)


class State(TypedDict):
    n: int


def three_steps(checkpointer: Any) -> Any:
    graph = StateGraph(State)
    graph.add_node("plan", lambda state: {"n": state["n"] + 1})
    graph.add_node("act", lambda state: {"n": state["n"] + 1})
    graph.add_node("report", lambda state: {"n": state["n"] + 1})
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "act")
    graph.add_edge("act", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


async def measure(checkpointer: Any, durability: Optional[str], seconds: float) -> Dict[str, Any]:
    """Runs the graph for ``seconds``, every run on one thread; every step's time."""
    graph = three_steps(checkpointer)
    options = {} if durability is None else {"durability": durability}
    config = {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
    steps: List[float] = []

    async def one_run() -> None:
        last = time.perf_counter()
        async for _ in graph.astream({"n": 0}, config, stream_mode="updates", **options):
            now = time.perf_counter()
            steps.append(now - last)
            last = now

    for _ in range(WARM_UP_RUNS):
        await one_run()
    steps.clear()
    client = getattr(checkpointer, "aclient", None)
    requests, commits = _counts(client)
    runs = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        await one_run()
        runs += 1
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    ordered = sorted(steps)
    figures = {
        "steps": len(steps),
        "seconds": elapsed,
        "cpuMsPerStep": 1000 * cpu / len(steps),
        "p50Ms": 1000 * ordered[len(ordered) // 2],
        "p99Ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
    }
    if client is not None:
        now_requests, now_commits = _counts(client)
        figures["requestsPerRun"] = (now_requests - requests) / runs
        figures["commitsPerRun"] = (now_commits - commits) / runs
    return figures


def _counts(client: Any) -> Any:
    return (client.requests, client.commits) if client is not None else (0, 0)


def median_of(rounds: List[Dict[str, Any]]) -> Dict[str, float]:
    def median(key: str) -> float:
        values = sorted(r[key] for r in rounds)
        return values[len(values) // 2]

    rates = sorted(r["steps"] / r["seconds"] for r in rounds)
    figures = {
        "stepsPerSec": round(rates[len(rates) // 2]),
        "p50Ms": round(median("p50Ms"), 3),
        "p99Ms": round(median("p99Ms"), 3),
        "cpuMsPerStep": round(median("cpuMsPerStep"), 3),
    }
    for key in ("requestsPerRun", "commitsPerRun"):
        if key in rounds[0]:
            figures[key] = round(median(key), 2)
    return figures


async def main(url: str, token: str, seconds: float, rounds: int) -> Dict[str, Any]:
    results = []
    async with FencedCheckpointSaver(client=CountingClient(url, token)) as fenced:
        for durability in (None, "sync"):
            memory_rounds, fenced_rounds = [], []
            for _ in range(rounds):
                memory_rounds.append(await measure(InMemorySaver(), durability, seconds))
                fenced_rounds.append(await measure(fenced, durability, seconds))
            memory, fenced_figures = median_of(memory_rounds), median_of(fenced_rounds)
            results.append(
                {
                    "durability": durability or "async (default)",
                    "memory": memory,
                    "fenced": fenced_figures,
                    "addedP50Ms": round(fenced_figures["p50Ms"] - memory["p50Ms"], 3),
                }
            )
    return {"rounds": rounds, "secondsPerRound": seconds, "results": results}


if __name__ == "__main__":
    URL, TOKEN, SECONDS, ROUNDS = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(asyncio.run(main(URL, TOKEN, SECONDS, ROUNDS))))
