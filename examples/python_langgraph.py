"""A LangGraph agent whose checkpoints are fenced commits, and what happens to a superseded run.

Run it against a server started with `npm start` (the first start prints a worker-capable
operator token for tenant `dev`; a worker token needs the take-over right for `langgraph/`,
`fencegate token create --tenant dev --role worker --may-take-over langgraph/`):

    pip install "./clients/python[langgraph]"     # Python >= 3.10
    FENCEGATE_TOKEN=fg_... python examples/python_langgraph.py

Worker A claims a thread's write ownership and runs a three-node graph on it. Worker B claims
the same thread while A still holds it (a take-over: B's fence is newer) and continues the
conversation. When A, superseded, runs again, its first write is refused with
StaleWriteOwnerError and nothing of it is stored: the thread stays B's. FENCEGATE_URL (default
http://127.0.0.1:7420) picks the server, FENCEGATE_THREAD (default: a new id) the thread.
"""

import asyncio
import operator
import os
import sys
import uuid
from pathlib import Path
from typing import Annotated, Dict, List, TypedDict

try:
    import fencegate
except ImportError:  # run from a checkout without installing the client
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))
    import fencegate

from langgraph.graph import END, START, StateGraph

from fencegate.langgraph import FencedCheckpointSaver, StaleWriteOwnerError


class Conversation(TypedDict):
    messages: Annotated[List[str], operator.add]


def agent(worker: str) -> StateGraph:
    """Three steps of an agent's turn; a real one would call a model in `think`."""

    def listen(state: Conversation) -> Dict[str, List[str]]:
        return {"messages": [f"{worker} read {len(state['messages'])} messages"]}

    def think(state: Conversation) -> Dict[str, List[str]]:
        return {"messages": [f"{worker} decided"]}

    def reply(state: Conversation) -> Dict[str, List[str]]:
        return {"messages": [f"{worker} replied"]}

    graph = StateGraph(Conversation)
    graph.add_node("listen", listen)
    graph.add_node("think", think)
    graph.add_node("reply", reply)
    graph.add_edge(START, "listen")
    graph.add_edge("listen", "think")
    graph.add_edge("think", "reply")
    graph.add_edge("reply", END)
    return graph


async def main(url: str, token: str, thread_id: str) -> int:
    config = {"configurable": {"thread_id": thread_id}}
    # Each worker's client is closed when it is done, and its saver releases what it holds.
    async with fencegate.AsyncClient(url, token) as client_a, fencegate.AsyncClient(
        url, token
    ) as client_b, FencedCheckpointSaver(
        client=client_a, holder="worker-a"
    ) as a, FencedCheckpointSaver(client=client_b, holder="worker-b") as b:
        owner_a = await a.aclaim_write_ownership(thread_id)
        graph_a = agent("worker-a").compile(checkpointer=owner_a)
        await graph_a.ainvoke({"messages": ["user: hello"]}, config)
        print(f"worker-a ran thread {thread_id} with fence {owner_a.fence}")

        owner_b = await b.aclaim_write_ownership(thread_id)
        graph_b = agent("worker-b").compile(checkpointer=owner_b)
        state = await graph_b.ainvoke({"messages": ["user: and then?"]}, config)
        print(
            f"worker-b took the thread over with fence {owner_b.fence}: "
            f"{len(state['messages'])} messages"
        )

        try:
            await graph_a.ainvoke({"messages": ["user: are you there?"]}, config)
        except StaleWriteOwnerError as error:
            print(f"worker-a was refused ({error.code}): it no longer owns the thread")
        else:
            print("worker-a wrote a thread it no longer owns")
            return 1

        tip = await b.aget_tuple(config)
        print(f"the thread ends with: {tip.checkpoint['channel_values']['messages'][-1]}")
    return 0


if __name__ == "__main__":
    TOKEN = os.environ.get("FENCEGATE_TOKEN")
    if not TOKEN:
        print(
            "set FENCEGATE_TOKEN to a worker token (with --may-take-over langgraph/) or an "
            "operator token"
        )
        sys.exit(64)
    URL = os.environ.get("FENCEGATE_URL", "http://127.0.0.1:7420")
    THREAD = os.environ.get("FENCEGATE_THREAD") or f"conversation-{uuid.uuid4().hex[:8]}"
    sys.exit(asyncio.run(main(URL, TOKEN, THREAD)))
