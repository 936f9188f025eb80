"""Progressive rollouts through both clients, against the real server: a ramp of a new policy
over a list of scopes step by step, its report, and a rollback that takes write authority away
from the new version's job in flight (docs/rollout.md)."""

from typing import Any, List

import pytest

from fencegate import (
    InvalidRequestError,
    PolicyMismatchError,
    RolloutConflictError,
    RolloutGate,
    Write,
)

#: The rollout's id and scopes are fixed, so the scopes its hash admits at each percent are too:
#: 2 of the 8 at 25 %, 7 at 75 %.
ROLLOUT = "v8-ramp"
SCOPES = [f"wf-r{i}/memory" for i in range(8)]


@pytest.fixture
def tenant(tenant, connect):
    """Every test here runs with the blocking Client and with the AsyncClient."""
    return tenant.through(connect)


def scopes_on_v7(worker: Any, operator: Any) -> None:
    operator.register_policy("v7")
    operator.register_policy("v8")
    for scope in SCOPES:
        grant = worker.acquire(scope, holder="v7-worker", ttl_ms=60_000, policy_version="v7")
        worker.release(scope, holder="v7-worker", fence=grant.fence)


def ramped(operator: Any) -> List[str]:
    """The scopes on v8 now."""
    page = operator.list_scopes(prefix="wf-r", limit=100)
    return [state.scope for state in page.items if state.policy_version == "v8"]


def test_a_ramp_advances_and_its_rollback_refuses_the_new_versions_late_commit(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scopes_on_v7(worker, operator)

    started = operator.start_rollout(
        from_policy="v7", to_policy="v8", steps=[25, 75, 100], scopes=SCOPES, rollout_id=ROLLOUT
    )
    assert (started["status"], started["step"], started["percent"]) == ("running", 1, 25)
    assert started["selection"] == {"scopes": SCOPES}
    first = ramped(operator)
    assert 0 < len(first) < len(SCOPES)
    assert operator.get_rollout(ROLLOUT) == started
    assert [r["rolloutId"] for r in operator.list_rollouts(status="running")] == [ROLLOUT]
    assert operator.list_rollouts(status="paused") == []

    advanced = operator.advance_rollout(ROLLOUT, revision=started["revision"])
    assert (advanced["step"], advanced["percent"]) == (2, 75)
    assert advanced["revision"] > started["revision"]
    second = ramped(operator)
    assert set(first) < set(second) < set(SCOPES)

    # A v8 job takes a ramped scope and commits while v8 holds it.
    scope = second[0]
    job = worker.acquire(scope, holder="v8-job", ttl_ms=60_000, policy_version="v8")
    assert job.policy_version == "v8"
    written = worker.commit(scope, job.fence, "v8-1", writes=[Write("summary", 0, "from v8")])
    assert written.committed

    report = operator.rollout_report(ROLLOUT)
    assert [(s["percent"], s["moved"]) for s in report["steps"]] == [
        (25, len(first)),
        (75, len(second) - len(first)),
    ]
    assert sum(s["commitsAccepted"] for s in report["steps"]) == 1
    assert report["rollback"] is None
    assert report["gateSeries"] == []

    rolled = operator.rollback_rollout(ROLLOUT, reason="v8 misbehaves")
    assert rolled["status"] == "rolled_back"
    assert ramped(operator) == []
    late = worker.commit(scope, job.fence, "v8-late", writes=[Write("summary", 1, "late")])
    assert not late.committed and late.error.code == "stale_fence"

    rollback = operator.rollout_report(ROLLOUT)["rollback"]
    assert rollback["moved"] == len(second) and rollback["skipped"] == []
    assert (rollback["staleAttempts"], rollback["staleAccepted"]) == (1, 0)
    assert worker.get_record(scope, "summary").value == "from v8"


def test_a_command_on_a_revision_the_rollout_has_left_is_a_rollout_conflict(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scopes_on_v7(worker, operator)
    started = operator.start_rollout(
        from_policy="v7", to_policy="v8", steps=[25, 75, 100], prefix="wf-r", rollout_id=ROLLOUT
    )
    assert started["selection"] == {"prefix": "wf-r"}
    paused = operator.pause_rollout(ROLLOUT, revision=started["revision"])
    assert paused["status"] == "paused"

    # Resuming is what a paused rollout allows: only the revision, read before the pause, is wrong.
    with pytest.raises(RolloutConflictError) as refused:
        operator.resume_rollout(ROLLOUT, revision=started["revision"])
    assert refused.value.code == "rollout_conflict"
    assert refused.value.details["status"] == "paused"
    assert refused.value.details["revision"] == paused["revision"]
    assert operator.get_rollout(ROLLOUT) == paused  # nothing changed

    resumed = operator.resume_rollout(ROLLOUT, revision=paused["revision"])
    promoted = operator.promote_rollout(ROLLOUT, revision=resumed["revision"])
    assert (promoted["status"], promoted["percent"]) == ("completed", 100)
    assert sorted(ramped(operator)) == sorted(SCOPES)


def test_an_unknown_rollout_reads_none(tenant):
    operator = tenant.operator()
    assert operator.get_rollout("no-such-rollout") is None
    assert operator.rollout_report("no-such-rollout") is None
    assert operator.list_rollouts() == []


def test_a_worker_naming_both_versions_gets_new_scopes_pinned_by_the_rollout(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    operator.register_policy("v7")
    operator.register_policy("v8")
    operator.start_rollout(
        from_policy="v7", to_policy="v8", steps=[50], prefix="new-", rollout_id=ROLLOUT
    )
    fresh = [f"new-{i}" for i in range(16)]
    grants = [
        worker.acquire(scope, holder="w", ttl_ms=60_000, policy_versions=["v7", "v8"])
        for scope in fresh
    ]
    # The hash pins each new scope: some to v8, the others to v7, and the grant says which.
    versions = {grant.policy_version for grant in grants}
    assert versions == {"v7", "v8"}
    pinned = {state.scope: state.policy_version for state in operator.list_scopes(prefix="new-").items}
    assert {grant.scope: grant.policy_version for grant in grants} == pinned
    assert operator.rollout_report(ROLLOUT)["pinnedAtAcquire"] == sum(
        1 for grant in grants if grant.policy_version == "v8"
    )
    # A worker that runs one version only is told which version runs a scope of the other.
    other = next(grant for grant in grants if grant.policy_version == "v8")
    worker.release(other.scope, holder="w", fence=other.fence)
    with pytest.raises(PolicyMismatchError) as refused:
        worker.acquire(other.scope, holder="v7-only", ttl_ms=60_000, policy_version="v7")
    assert refused.value.details["currentPolicyVersion"] == "v8"


def test_a_rollout_with_holds_and_gates_keeps_them_and_a_bad_gate_is_refused(tenant):
    worker, operator = tenant.worker(), tenant.operator()
    scopes_on_v7(worker, operator)
    gates: List[RolloutGate] = [
        {"name": "jobs", "metric": "job_failure_ratio", "minSamples": 20, "confidence": 0.95},
        {"name": "verify", "metric": "verify_violations", "minSamples": 1},
    ]
    started = operator.start_rollout(
        from_policy="v7",
        to_policy="v8",
        steps=[25, 100],
        scopes=SCOPES,
        rollout_id=ROLLOUT,
        hold_seconds=[600, 0],
        gates=gates,
        on_failure="pause",
    )
    assert started["holdSeconds"] == [600, 0]
    assert started["gates"] == gates
    assert (started["onFailure"], started["gateResults"]) == ("pause", [])

    with pytest.raises(InvalidRequestError) as refused:
        operator.start_rollout(
            from_policy="v7",
            to_policy="v8",
            steps=[25],
            prefix="other-",
            hold_seconds=60,
            gates=[{"name": "e", "metric": "external", "source": "nowhere", "minSamples": 1, "max": 1}],
        )
    assert refused.value.details["field"] == "gates[0].source"
