"""A fresh tenant per test, with the tokens the LangGraph saver runs on: a worker token holding the
take-over right over the thread scopes (``langgraph/``), and an operator token for deleting
threads. Each saver made here is closed after its test."""

import sys
from pathlib import Path
from typing import Any, Callable, Iterator, List

import pytest

import fencegate
from fencegate.langgraph import FencedCheckpointSaver

sys.path.insert(0, str(Path(__file__).resolve().parent))

THREADS = "langgraph/"


def worker_token(admin: fencegate.Client, tenant: str) -> str:
    """A worker token that may take over thread scopes: claiming a live thread needs no operator."""
    made = admin.create_token(
        tenant=tenant, role="worker", label="langgraph worker", may_take_over=[THREADS]
    )
    return str(made["token"])


class Tokens:
    def __init__(self, url: str, worker: str, operator: str) -> None:
        self.url = url
        self.worker = worker
        self.operator = operator

    def saver(self, **options: Any) -> FencedCheckpointSaver:
        """A saver with both kinds of client (``options`` may replace them); the operator's only
        for deleting threads."""
        clients = {
            "client": fencegate.Client(self.url, self.worker),
            "aclient": fencegate.AsyncClient(self.url, self.worker),
            "operator_client": fencegate.Client(self.url, self.operator),
            "operator_aclient": fencegate.AsyncClient(self.url, self.operator),
        }
        return FencedCheckpointSaver(**{**clients, **options})


@pytest.fixture
def tokens(server: Any, admin: fencegate.Client, tenant: Any) -> Tokens:
    return Tokens(server.url, worker_token(admin, tenant.name), tenant.operator_token)


@pytest.fixture
def make_saver(tokens: Tokens) -> Iterator[Callable[..., FencedCheckpointSaver]]:
    made: List[FencedCheckpointSaver] = []

    def make(**options: Any) -> FencedCheckpointSaver:
        saver = tokens.saver(**options)
        made.append(saver)
        return saver

    yield make
    for saver in made:
        saver.close()


@pytest.fixture
def saver(make_saver: Callable[..., FencedCheckpointSaver]) -> FencedCheckpointSaver:
    return make_saver()
