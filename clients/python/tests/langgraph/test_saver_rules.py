"""The saver's own rules: which client each half needs, bad input refused with invalid_request
and nothing stored, configurable.fence as in the TypeScript saver, the saver's own lease on a
thread (kept renewed, never re-acquired once lost), what close releases, and an unreachable
store refused, not guessed."""

import asyncio
from uuid import uuid4

import pytest
from lg_checkpoints import checkpoint, config, metadata

import fencegate
from fencegate import InvalidRequestError, StoreUnavailableError
from fencegate.langgraph import FencedCheckpointSaver, StaleWriteOwnerError


def test_a_saver_needs_a_client(tokens):
    with pytest.raises(InvalidRequestError, match="client="):
        FencedCheckpointSaver()


def test_each_half_says_which_client_it_lacks(tokens):
    only_sync = FencedCheckpointSaver(client=fencegate.Client(tokens.url, tokens.worker))
    only_async = FencedCheckpointSaver(client=fencegate.AsyncClient(tokens.url, tokens.worker))
    with pytest.raises(InvalidRequestError, match="needs a fencegate.AsyncClient"):
        asyncio.run(only_sync.aget_tuple(config()))
    with pytest.raises(InvalidRequestError, match="needs a fencegate.Client"):
        only_async.get_tuple(config())
    with pytest.raises(InvalidRequestError, match="needs a fencegate.Client"):
        only_async.claim_write_ownership("t")


@pytest.mark.parametrize("fence", ["1", -1, 1.5, True])
def test_a_fence_that_is_not_a_whole_number_is_refused_and_nothing_stored(saver, fence):
    thread_id = str(uuid4())
    run = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "fence": fence}}
    with pytest.raises(InvalidRequestError, match="configurable.fence") as caught:
        saver.put(run, checkpoint(), metadata(), {})
    assert caught.value.details == {"field": "configurable.fence"}
    assert saver.get_tuple(config(thread_id)) is None


def test_a_write_without_a_thread_or_checkpoint_id_says_what_to_pass(saver):
    with pytest.raises(InvalidRequestError, match="configurable.thread_id is missing"):
        saver.put({"configurable": {}}, checkpoint(), metadata(), {})
    with pytest.raises(InvalidRequestError, match="configurable.checkpoint_id"):
        saver.put_writes(config(), [("ch", 1)], "task")
    with pytest.raises(InvalidRequestError, match="configurable.thread_id must be a string"):
        saver.get_tuple({"configurable": {"thread_id": ["a"]}})


def test_a_writer_writes_only_its_own_thread(saver):
    owner = saver.claim_write_ownership("mine")
    with pytest.raises(InvalidRequestError, match="owns thread 'mine'"):
        owner.put(config("theirs"), checkpoint(), metadata(), {})
    assert saver.get_tuple(config("theirs")) is None


def test_a_run_with_its_own_fence_is_refused_once_taken_over(saver, tenant):
    thread_id = str(uuid4())
    scope = saver.scope_for(thread_id)
    worker = fencegate.Client(saver.client.base_url, tenant.worker_token)
    grant = worker.acquire(scope, "run-42", 60_000)
    run = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "fence": grant.fence}}
    first = saver.put(run, checkpoint(), metadata(), {})
    tenant.operator().takeover(scope, "run-43", ttl_ms=60_000)
    with pytest.raises(StaleWriteOwnerError) as caught:
        saver.put(
            {**run, "configurable": {**first["configurable"], "fence": grant.fence}},
            checkpoint(),
            metadata(step=1),
            {},
        )
    assert caught.value.code == "stale_fence"
    assert [t.checkpoint["id"] for t in saver.list(config(thread_id))] == [
        first["configurable"]["checkpoint_id"]
    ]


def test_the_savers_own_lease_once_lost_is_not_taken_again(saver, tenant):
    thread_id = str(uuid4())
    first = saver.put(config(thread_id), checkpoint(), metadata(), {})
    assert tenant.operator().get_scope(saver.scope_for(thread_id)).holder == saver.holder
    tenant.operator().takeover(saver.scope_for(thread_id), "operator-run", ttl_ms=60_000)
    for step in (1, 2):
        with pytest.raises(StaleWriteOwnerError):
            saver.put(first, checkpoint(), metadata(step=step), {})
    assert tenant.operator().get_scope(saver.scope_for(thread_id)).holder == "operator-run"


def test_close_releases_what_the_saver_and_its_writers_hold(tokens, tenant):
    saver = tokens.saver()
    saver.put(config("own-lease"), checkpoint(), metadata(), {})
    saver.claim_write_ownership("claimed")
    saver.close()
    operator = tenant.operator()
    assert operator.get_scope(saver.scope_for("own-lease")).holder is None
    assert operator.get_scope(saver.scope_for("claimed")).holder is None


def test_a_released_writer_is_refused(saver):
    owner = saver.claim_write_ownership("released")
    stored = owner.put(config("released"), checkpoint(), metadata(), {})
    owner.release()
    with pytest.raises(StaleWriteOwnerError) as caught:
        owner.put_writes(stored, [("ch", "late")], "task")
    assert caught.value.code == "authority_revoked"
    assert saver.get_tuple(stored).pending_writes == []


@pytest.mark.asyncio
async def test_an_unreachable_store_is_refused_not_guessed():
    dead = "http://127.0.0.1:9"
    saver = FencedCheckpointSaver(
        client=fencegate.Client(dead, "fg_x", retries=0),
        aclient=fencegate.AsyncClient(dead, "fg_x", retries=0),
    )
    with pytest.raises(StoreUnavailableError):
        saver.put(config(), checkpoint(), metadata(), {})
    with pytest.raises(StoreUnavailableError):
        await saver.aget_tuple(config())


def test_claiming_a_held_thread_needs_the_take_over_right(saver, tenant):
    plain_worker = FencedCheckpointSaver(
        client=fencegate.Client(saver.client.base_url, tenant.worker_token)
    )
    saver.claim_write_ownership("held")
    with pytest.raises(fencegate.ForbiddenError):
        plain_worker.claim_write_ownership("held")
    plain_worker.claim_write_ownership("free")  # a thread nobody holds is simply acquired


def test_deleting_a_thread_is_an_operators_action(saver, tenant):
    stored = saver.put(config("kept"), checkpoint(), metadata(), {})
    worker_only = FencedCheckpointSaver(
        client=fencegate.Client(saver.client.base_url, tenant.worker_token)
    )
    with pytest.raises(fencegate.ForbiddenError):
        worker_only.delete_thread("kept")
    assert saver.get_tuple(stored) is not None


def test_a_claimed_writer_of_a_deleted_thread_is_refused(saver):
    owner = saver.claim_write_ownership("doomed")
    stored = owner.put(config("doomed"), checkpoint(), metadata(), {})
    saver.delete_thread("doomed")
    with pytest.raises(StaleWriteOwnerError) as caught:
        owner.put(stored, checkpoint(), metadata(step=1), {})
    assert caught.value.code == "scope_deleted"
    assert saver.get_tuple(config("doomed")) is None


def test_a_claim_starts_a_deleted_thread_again_once_an_operator_re_creates_it(saver, tenant):
    old = saver.claim_write_ownership("reborn")
    old.put(config("reborn"), checkpoint({"x": "before"}), metadata(), {"x": 1})
    saver.delete_thread("reborn")
    # The worker token's take-over right does not undo a deletion: only an operator re-creates.
    with pytest.raises(fencegate.ScopeDeletedError):
        saver.claim_write_ownership("reborn")
    tenant.operator().takeover(saver.scope_for("reborn"), holder="operator")
    new = saver.claim_write_ownership("reborn")
    stored = new.put(config("reborn"), checkpoint({"x": "after"}), metadata(), {"x": 1})
    assert saver.get_tuple(config("reborn")).checkpoint["channel_values"] == {"x": "after"}
    with pytest.raises(StaleWriteOwnerError):
        old.put_writes(stored, [("ch", "late")], "task")


@pytest.mark.asyncio
async def test_async_with_releases_what_the_saver_holds(tokens, tenant):
    async with tokens.saver() as saver:
        await saver.aput(config("async-own"), checkpoint(), metadata(), {})
        await saver.aclaim_write_ownership("async-claimed")
    operator = tenant.operator()
    assert operator.get_scope(saver.scope_for("async-own")).holder is None
    assert operator.get_scope(saver.scope_for("async-claimed")).holder is None


def test_each_saver_holds_under_an_id_of_its_own(tokens):
    first, second = tokens.saver(), tokens.saver()
    assert first.holder != second.holder
    assert tokens.saver(holder="agent-7").holder == "agent-7"


def test_a_saver_naming_a_policy_acquires_and_commits_under_it(make_saver, tenant):
    operator = tenant.operator()
    for version in ("v7", "v8"):
        operator.register_policy(version)
    v8 = make_saver(policy_version="v8")
    v7 = make_saver(policy_version="v7")
    thread_id = str(uuid4())
    v8.put(config(thread_id), checkpoint(), metadata(), {})
    scope = v8.scope_for(thread_id)
    assert operator.get_scope(scope).policy_version == "v8"
    commits = operator.audit(scope=scope, kind="commit")["items"]
    assert commits and {entry["policyVersion"] for entry in commits} == {"v8"}

    # A saver of the other version is refused the thread before it writes anything.
    with pytest.raises(fencegate.PolicyMismatchError) as caught:
        v7.put(config(thread_id), checkpoint(), metadata(), {})
    assert caught.value.details["currentPolicyVersion"] == "v8"
    with pytest.raises(fencegate.PolicyMismatchError):
        v7.claim_write_ownership(thread_id)
    assert len(operator.audit(scope=scope, kind="commit")["items"]) == len(commits)
