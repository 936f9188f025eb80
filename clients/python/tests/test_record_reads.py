"""read_records: records by name and pages of records of one scope in one exchange, each as its
own read answers it, through both clients against the real server."""

import pytest

import fencegate
from fencegate import Write


def test_records_and_pages_read_together_answer_as_each_read_alone(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    scope = "wf-r1/memory"
    names = ["cp/1", "cp/2", "cp/3", "wr/3/t/0", "wr/3/t/1", "bl/a/1"]
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    assert worker.commit(scope, grant.fence, "r1", [Write(n, 0, {"n": n}) for n in names]).committed

    answer = worker.read_records(
        scope,
        records=["bl/a/1", "bl/a/9"],
        pages=[{"prefix": "cp/", "direction": "desc", "limit": 2}, {"prefix": "wr/3/"}],
    )
    assert isinstance(answer, fencegate.RecordReads)
    assert answer.records == [
        worker.get_record(scope, "bl/a/1"),
        worker.get_record(scope, "bl/a/9"),
    ]
    assert answer.pages == [
        worker.list_records_page(scope, prefix="cp/", direction="desc", limit=2),
        worker.list_records_page(scope, prefix="wr/3/"),
    ]
    newest = answer.pages[0]
    assert [record.name for record in newest.items] == ["cp/3", "cp/2"]
    rest = worker.list_records_page(
        scope, prefix="cp/", direction="desc", limit=2, cursor=newest.next_cursor
    )
    assert [record.name for record in rest.items] == ["cp/1"]


def test_a_read_that_is_not_valid_is_refused_with_its_place(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    with pytest.raises(fencegate.InvalidRequestError) as refused:
        worker.read_records("wf-r2/memory", pages=[{"prefix": "cp/"}, {"limit": 0}])
    assert refused.value.details["field"] == "pages[1].limit"
    with pytest.raises(fencegate.InvalidRequestError):
        worker.read_records("wf-r2/memory")


#: A value whose JSON text is about 150 KB: seven of them pass the server's 1 MiB byte budget.
LARGE = "x" * 150_000


def _write_large(worker, scope, names):
    grant = worker.acquire(scope, holder="w", ttl_ms=30_000)
    # Three values per commit keep its body under 1 MiB.
    for start in range(0, len(names), 3):
        batch = names[start : start + 3]
        writes = [Write(name, 0, LARGE) for name in batch]
        assert worker.commit(scope, grant.fence, f"large-{start}", writes).committed


def test_pages_cut_by_the_byte_budget_are_followed_to_the_end(tenant, connect):
    worker = connect(tenant.server.url, tenant.worker_token)
    scope = "wf-r3/memory"
    names = [f"cp/{n}" for n in range(9)]
    _write_large(worker, scope, names)

    everything = worker.list_records(scope)
    assert [record.name for record in everything] == names
    assert all(record.value == LARGE for record in everything)

    first = worker.list_records_page(scope, prefix="cp/", limit=100)
    assert 0 < len(first.items) < len(names)
    assert first.next_cursor is not None
    # Once earlier reads of a request spent the budget, a page holds nothing but says where
    # it starts.
    answer = worker.read_records(
        scope,
        pages=[
            {"prefix": "cp/"},
            {"prefix": "cp/", "direction": "desc"},
            {"prefix": "cp/", "order": "revision"},
        ],
    )
    assert answer.pages[0].items == first.items
    assert answer.pages[2].items == []
    again = worker.list_records_page(
        scope, prefix="cp/", order="revision", cursor=answer.pages[2].next_cursor
    )
    assert again == worker.list_records_page(scope, prefix="cp/", order="revision")
