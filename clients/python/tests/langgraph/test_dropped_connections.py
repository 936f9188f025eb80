"""A LangGraph run whose node outlives the saver's idle connections (a NAT or a load balancer
dropped them while the node worked, without a word to the client) stores every checkpoint: a
commit written on a dropped connection goes out once more on a new one, so none is abandoned and
no stored outcome needs reading; a lease operation goes out on a new connection after such a
wait. Through the relay of the client tests, which forgets the open connections as the first node
ends."""

import time
from typing import Callable, List
from uuid import uuid4

import pytest
from test_async_connections import CountingRelay
from test_write_batch import commits_of, three_steps

import fencegate

pytestmark = pytest.mark.asyncio


def outlives_idle_connections(relay: CountingRelay) -> Callable[[], None]:
    """A node's work: the first node's takes 1.1 s, past the second a write that cannot be sent
    twice trusts an idle connection, and the relay then drops every connection."""
    waited: List[bool] = []

    def work() -> None:
        if not waited:
            waited.append(True)
            time.sleep(1.1)
            relay.forget_all()

    return work


@pytest.mark.parametrize("durability", ["sync", "async"])
async def test_a_run_whose_node_outlives_the_idle_connections_stores_every_checkpoint(
    tokens, make_saver, tenant, durability
):
    relay = CountingRelay(tokens.url)
    saver = make_saver(aclient=fencegate.AsyncClient(relay.url, tokens.worker))
    thread_id = str(uuid4())
    run = {"configurable": {"thread_id": thread_id}}
    try:
        graph = three_steps(saver, each_node=outlives_idle_connections(relay))
        result = await graph.ainvoke({"n": 0}, run, durability=durability)
        await saver.aclient.aclose()
    finally:
        relay.close()
    assert result == {"n": 3}
    assert len(commits_of(tenant, saver, thread_id)) == 5
    assert len(relay.connections) > 1  # the dropped connections were replaced
    assert not [path for _, path in relay.forwarded if path.startswith("/v1/operations/")]
