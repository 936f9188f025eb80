"""The fencegate HTTP API, one function per call, written once for ``Client`` and ``AsyncClient``
(each function gives the steps of its call, see _call_steps.py), with the retry rules of the
TypeScript FencegateClient. scripts/write_client_methods.py writes both clients' methods from
these functions' signatures and docstrings: ``client.acquire(...)`` runs ``acquire(client, ...)``.
Each call names its route: the method, the path and the retry class come from the route table
(_route_table.py, generated from the server's, see _routes.py).

Retries are limited to what cannot do harm: a request that never reached the server, or that the
server answered ``store_unavailable`` (nothing changed), is sent again; after a lost reply, reads
and the writes that are idempotent by construction (retry class ``idempotent``: complete_intent,
register_policy, a cutover or a rollout's start by its id, a rollout's rollback, revoke_token,
abandon_operation; job events when each carries ``at``) are sent again; lease operations, claims,
token creation and a rollout's other commands are not (they may have taken effect): that is
``OutcomeUnknownError``. So is a write answered by a redirect (never followed) or by a proxy's
502, 503 or 504 without a fencegate error body: the request may have
been passed on before the answer was made.

A commit carries an operationId. When an attempt's outcome is unknown (a lost reply,
``outcome_unknown``, a server fault, a redirect or a gateway answer), the stored outcome of that
operationId decides: committed or rejected is the answer; none stored means the commit has not
applied yet, and the same commit is sent again (its operationId applies it at most once). Still
unknown after the retries, the client settles it with ``abandon_operation``: the server answers
the stored outcome if the commit was stored meanwhile, otherwise stores ``operation_abandoned``
so that commit can never apply. Nothing else decides it; if abandon cannot be reached either, the
answer is ``OutcomeUnknownError``.
"""

import uuid
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _requests as _req
from ._base import FencegateError
from ._call_steps import CallSteps
from ._client_base import ClientBase
from ._commit_batch import (
    MAX_BATCH_COMMITS,
    abandon,
    commit_body,
    commit_in_batches,
    send_commit,
    stored_outcome,
)
from ._routes import route
from ._sending import json_or_none, send, send_json
from .errors import InternalError, InvalidRequestError
from .models import (
    CancelResult,
    CommitPart,
    CommitResult,
    Grant,
    JsonObject,
    Page,
    RecordReads,
    RecordState,
    ReleaseResult,
    Rollout,
    RolloutGate,
    RolloutReport,
    ScopeState,
    VerifyReport,
    camel,
    from_wire,
)

#: The most records one page of the server may be asked for.
MAX_LIST_LIMIT = 1000

# Leases and scopes


def acquire(
    api: ClientBase,
    scope: str,
    holder: str,
    ttl_ms: int,
    policy_version: Optional[str] = None,
    job: Optional[Mapping[str, Any]] = None,
    policy_versions: Optional[Sequence[str]] = None,
) -> "CallSteps[Grant]":
    """``job`` (``job_id``, ``attempt``, ``states``) records the job's states in the jobs ledger
    in the same transaction as the grant, under the fence granted. A worker that can run either
    version of a rollout names both in ``policy_versions`` (instead of ``policy_version``); the
    grant's ``policy_version`` says which one applies to the scope."""
    body = _req.body(
        scope=scope,
        holder=holder,
        ttl_ms=ttl_ms,
        policy_version=policy_version,
        policy_versions=None if policy_versions is None else list(policy_versions),
        job=_req.job(job),
    )
    answer = yield from send_json(api, route("acquire"), body)
    return from_wire(Grant, answer)


def renew(api: ClientBase, scope: str, holder: str, fence: int, ttl_ms: int) -> "CallSteps[Grant]":
    body = _req.body(scope=scope, holder=holder, fence=fence, ttl_ms=ttl_ms)
    answer = yield from send_json(api, route("renew"), body)
    return from_wire(Grant, answer)


def release(
    api: ClientBase, scope: str, holder: str, fence: int, job: Optional[Mapping[str, Any]] = None
) -> "CallSteps[ReleaseResult]":
    """``job`` as for :meth:`acquire`, recorded with the release."""
    body = _req.body(scope=scope, holder=holder, fence=fence, job=_req.job(job))
    answer = yield from send_json(api, route("release"), body)
    return from_wire(ReleaseResult, answer)


def cancel_intents(
    api: ClientBase,
    scope: str,
    holder: str,
    fence: int,
    committed_from: int,
    reason: Optional[str] = None,
) -> "CallSteps[List[str]]":
    """The holder (``holder`` at ``fence``, the scope's current fence) cancels the pending intents
    committed under fences from ``committed_from`` up to its own: those of the runs it
    superseded. Its fence and lease stay. The server cancels a page of at most 50 of them per
    request; this sends one request after another, each with the ``nextCursor`` of the one
    before, until the last page. Answers the effect keys cancelled, in key order. Cut short by an
    error, the pages before it stay done, and the same call again redoes them unchanged."""
    cancelled: List[str] = []
    cursor: Optional[str] = None
    while True:
        body = _req.body(
            scope=scope,
            holder=holder,
            fence=fence,
            committedFrom=committed_from,
            reason=reason,
            cursor=cursor,
        )
        answer = yield from send_json(api, route("cancelIntents"), body)
        cancelled.extend(str(key) for key in answer["cancelled"])
        next_cursor = answer.get("nextCursor")
        if next_cursor is None:
            return cancelled
        if next_cursor == cursor:
            # A cursor that does not move on would ask for the same page forever.
            raise InternalError(
                "a page of cancel_intents answered the cursor it was sent with",
                {"cursor": cursor},
            )
        cursor = str(next_cursor)


def get_scope(api: ClientBase, scope: str) -> "CallSteps[Optional[ScopeState]]":
    request = route("getScope", {"scope": scope})
    answer = yield from json_or_none(api, "scope_not_found", request)
    return None if answer is None else from_wire(ScopeState, answer)


def list_scopes(
    api: ClientBase,
    prefix: Optional[str] = None,
    limit: Optional[int] = None,
    cursor: Optional[str] = None,
) -> "CallSteps[Page]":
    query = _req.query(prefix=prefix, limit=limit, cursor=cursor)
    answer = yield from send_json(api, route("listScopes", query=query))
    return _page(answer, ScopeState)


def takeover(
    api: ClientBase,
    scope: str,
    holder: str,
    ttl_ms: Optional[int] = None,
    policy_version: Optional[str] = None,
    reason: Optional[str] = None,
) -> "CallSteps[Grant]":
    """Operator: a new grant (fence + 1) regardless of the live lease."""
    body = _req.body(holder=holder, ttl_ms=ttl_ms, policy_version=policy_version, reason=reason)
    answer = yield from send_json(api, route("takeover", {"scope": scope}), body)
    return from_wire(Grant, answer)


def cancel(api: ClientBase, scope: str, reason: Optional[str] = None) -> "CallSteps[CancelResult]":
    """Operator: revokes authority (fence + 1, no holder); pending intents are cancelled."""
    request = route("cancel", {"scope": scope})
    answer = yield from send_json(api, request, _req.body(reason=reason))
    return from_wire(CancelResult, answer)


def delete_scope(
    api: ClientBase, scope: str, reason: Optional[str] = None
) -> "CallSteps[JsonObject]":
    """Operator: fence + 1, the scope deleted and its records tombstoned; ``{"fence": n}``."""
    body = _req.body(reason=reason) if reason is not None else None
    answer = yield from send_json(api, route("deleteScope", {"scope": scope}), body)
    return answer


# Records and commits


def get_record(api: ClientBase, scope: str, name: str) -> "CallSteps[RecordState]":
    """The record; one that never existed reads ``exists=False, revision=0``."""
    answer = yield from send_json(api, route("getRecord", {"scope": scope, "name": name}))
    return from_wire(RecordState, answer)


def list_records(api: ClientBase, scope: str) -> "CallSteps[List[RecordState]]":
    """Every record of the scope by name (tombstones too). The server answers as many as one
    answer may hold and a ``nextCursor`` when more follow (a page its byte budget cut may be
    short); the rest is read page by page. The pages are not one snapshot."""
    answer = yield from send_json(api, route("listRecords", {"scope": scope}))
    items = list(answer["items"])
    cursor = answer.get("nextCursor")
    while cursor is not None:
        query = _req.query(cursor=cursor, limit=MAX_LIST_LIMIT)
        answer = yield from send_json(api, route("listRecords", {"scope": scope}, query))
        items.extend(answer["items"])
        cursor = answer.get("nextCursor")
    return [from_wire(RecordState, item) for item in items]


def list_records_page(
    api: ClientBase,
    scope: str,
    prefix: Optional[str] = None,
    direction: str = "asc",
    limit: Optional[int] = None,
    cursor: Optional[str] = None,
    order: Optional[str] = None,
    after: Optional[str] = None,
) -> "CallSteps[Page]":
    """One page of the scope's records (tombstones too): names starting with ``prefix``, in
    ``order`` (``name``, the default, or ``revision``) and ``direction`` (``asc`` or
    ``desc``), at most ``limit`` (1 to 1,000, default 100), past ``after`` (a name) or from
    ``cursor`` (the previous page's ``next_cursor``). Items are ``RecordState``."""
    query = _req.query(
        prefix=prefix, order=order, direction=direction, after=after, limit=limit, cursor=cursor
    )
    answer = yield from send_json(api, route("listRecords", {"scope": scope}, query))
    return _page(answer, RecordState)


def read_records(
    api: ClientBase,
    scope: str,
    records: Sequence[str] = (),
    pages: Sequence[Mapping[str, Any]] = (),
) -> "CallSteps[RecordReads]":
    """Records by name and pages of records of one scope in one exchange, each as
    :meth:`get_record` and :meth:`list_records_page` read it (a page's keys are that method's
    arguments: ``prefix``, ``order``, ``direction``, ``after``, ``limit``, ``cursor``), in the
    order asked; not one snapshot. At most 64 reads, records and pages together, reading at
    most 1,000 records (a name counts one, a page its limit) and naming at most as many
    records as the server's byte budget holds of the largest values (4 by default). The
    answer shares that budget: a page may end early, or hold nothing once earlier reads spent
    it; its ``next_cursor`` then reads on."""
    body = {
        "records": list(records),
        "pages": [_req.body(**page) for page in pages],
    }
    answer = yield from send_json(api, route("readRecords", {"scope": scope}), body)
    return RecordReads(
        records=[from_wire(RecordState, item) for item in answer["records"]],
        pages=[_page(page, RecordState) for page in answer["pages"]],
    )


def commit(
    api: ClientBase,
    scope: str,
    fence: int,
    operation_id: str,
    writes: Iterable[CommitPart] = (),
    reads: Iterable[CommitPart] = (),
    intents: Iterable[CommitPart] = (),
    task_id: Optional[str] = None,
    policy_version: Optional[str] = None,
    settle_unknown: bool = True,
    release: bool = False,
    job: Optional[Mapping[str, Any]] = None,
) -> "CallSteps[CommitResult]":
    """One atomic commit. Returns ``committed`` or ``rejected`` (``result.error.code``).

    ``release=True`` makes it the run's last commit: committed, it also releases the lease in
    its transaction, recording ``job`` (as for :meth:`release`) with it.

    When an attempt's outcome is unknown, the stored outcome of ``operation_id`` is read:
    it is the answer when there is one, else the same commit is sent again. Still unknown
    after the retries, it is settled with ``abandon_operation`` (the stored outcome, or
    ``operation_abandoned``); with ``settle_unknown=False`` it raises
    ``OutcomeUnknownError`` instead, and the caller may send the same commit again.
    """
    body = commit_body(
        scope, fence, operation_id, writes, reads, intents, task_id, policy_version, release, job
    )
    return (yield from send_commit(api, body, settle_unknown))


def commit_many(
    api: ClientBase,
    commits: Sequence[Mapping[str, Any]],
    settle_unknown: bool = True,
) -> "CallSteps[List[Union[CommitResult, FencegateError]]]":
    """Up to 64 commits in one request (``POST /v1/commits``; more than one when the body limit,
    the client's ``max_body_bytes`` of 1 MiB by default, splits them), each a mapping of
    :meth:`commit`'s arguments (``scope``, ``fence``, ``operation_id``, ``writes``, ...). Answers
    one item per commit, in order: its ``CommitResult``, or the error its commit alone would
    raise (an invalid commit is refused on its own). A batch the server refuses whole (over its
    limit, not a valid body) is sent commit by commit. A batch whose reply was lost is sent again
    as it was: each operationId applies its commit at most once, so the commits that landed
    answer their stored outcomes. A commit still unknown after the retries is settled as
    :meth:`commit` settles one."""
    if not 1 <= len(commits) <= MAX_BATCH_COMMITS:
        raise InvalidRequestError(
            f"commits must hold 1 to {MAX_BATCH_COMMITS} commits, not {len(commits)}: split a "
            "longer batch",
            {"field": "commits", "max": MAX_BATCH_COMMITS, "given": len(commits)},
        )
    bodies = [commit_body(**commit) for commit in commits]
    return (yield from commit_in_batches(api, bodies, [settle_unknown] * len(bodies)))


def get_operation(api: ClientBase, operation_id: str) -> "CallSteps[Optional[CommitResult]]":
    """The stored outcome, exactly as first answered; None: no outcome *yet* (see abandon)."""
    return (yield from stored_outcome(api, operation_id))


def abandon_operation(
    api: ClientBase, operation_id: str, reason: Optional[str] = None
) -> "CallSteps[CommitResult]":
    """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good.

    From then on every commit with this id, in flight or later, gets that same answer.
    """
    return (yield from abandon(api, operation_id, reason))


# Intents


def list_intents(
    api: ClientBase,
    scope: Optional[str] = None,
    status: Optional[str] = None,
    limit: Optional[int] = None,
    cursor: Optional[str] = None,
) -> "CallSteps[Page]":
    query = _req.query(scope=scope, status=status, limit=limit, cursor=cursor)
    answer = yield from send_json(api, route("listIntents", query=query))
    return _page(answer)


def get_intent(api: ClientBase, effect_key: str) -> "CallSteps[Optional[JsonObject]]":
    request = route("getIntent", {"effectKey": effect_key})
    answer = yield from json_or_none(api, "not_found", request)
    return answer


def claim_intents(
    api: ClientBase,
    dispatcher: str,
    ttl_ms: int,
    limit: int,
    targets: Optional[Sequence[str]] = None,
) -> "CallSteps[List[JsonObject]]":
    """Claims due intents. Never sent again after a lost reply: those claims lapse after
    ``ttl_ms`` and are claimed again."""
    body = _req.body(dispatcher=dispatcher, ttl_ms=ttl_ms, limit=limit)
    if targets is not None:
        body["targets"] = list(targets)
    answer = yield from send_json(api, route("claimIntents"), body)
    return list(answer["items"])


def complete_intent(
    api: ClientBase,
    effect_key: str,
    claim_fence: int,
    outcome: str,
    retryable: Optional[bool] = None,
    provider_ref: Optional[str] = None,
    error: Optional[str] = None,
    retry_after_ms: Optional[int] = None,
    code: Optional[str] = None,
) -> "CallSteps[JsonObject]":
    """Records a delivery outcome; applied only under the current claim fence, so resent after
    a lost reply. A resend answered ``stale_claim`` says ``details["afterLostReply"]``: the
    lost attempt may be the one that recorded it (``get_intent`` shows the status).
    ``code="target_not_allowed"`` (with ``outcome="failed"``) audits a refusal to send."""
    body = _req.body(
        claim_fence=claim_fence,
        outcome=outcome,
        retryable=retryable,
        provider_ref=provider_ref,
        error=error,
        retry_after_ms=retry_after_ms,
        code=code,
    )
    answer = yield from send_json(api, route("completeIntent", {"effectKey": effect_key}), body)
    return answer


# Policies, cutovers, jobs


def register_policy(
    api: ClientBase, version: str, digest: Optional[str] = None, description: Optional[str] = None
) -> "CallSteps[Tuple[JsonObject, bool]]":
    """Operator: ``(policy, created)``; created is False for the same version again."""
    body = _req.body(version=version, digest=digest, description=description)
    reply = yield from send(api, route("registerPolicy"), body)
    return reply.json(), reply.status == 201


def list_policies(api: ClientBase) -> "CallSteps[List[JsonObject]]":
    answer = yield from send_json(api, route("listPolicies"))
    return list(answer["items"])


def cutover(
    api: ClientBase,
    to_policy: str,
    holder: str,
    cutover_id: Optional[str] = None,
    scopes: Optional[Sequence[str]] = None,
    prefix: Optional[str] = None,
    lease_ttl_ms: Optional[int] = None,
    reason: Optional[str] = None,
) -> "CallSteps[JsonObject]":
    """Operator: moves scopes to a policy. The id is made here when not given, so a resend
    after a lost reply is the same, resumable cutover."""
    body = _req.body(
        cutover_id=cutover_id or str(uuid.uuid4()),
        to_policy=to_policy,
        holder=holder,
        prefix=prefix,
        lease_ttl_ms=lease_ttl_ms,
        reason=reason,
    )
    if scopes is not None:
        body["scopes"] = list(scopes)
    answer = yield from send_json(api, route("cutover"), body)
    return answer


def list_cutovers(
    api: ClientBase, limit: Optional[int] = None, cursor: Optional[str] = None
) -> "CallSteps[Page]":
    """Operator: cutovers, newest first."""
    query = _req.query(limit=limit, cursor=cursor)
    answer = yield from send_json(api, route("listCutovers", query=query))
    return _page(answer)


def cutover_report(api: ClientBase, cutover_id: str) -> "CallSteps[Optional[JsonObject]]":
    request = route("cutoverReport", {"cutoverId": cutover_id})
    answer = yield from json_or_none(api, "not_found", request)
    return answer


def record_job_events(api: ClientBase, events: Iterable[Mapping[str, Any]]) -> "CallSteps[None]":
    """Reports queue job events. Resent after a lost reply only when every event has ``at``."""
    wire = [{camel(key): value for key, value in event.items()} for event in events]
    request = route("recordJobEvents", timed=all("at" in event for event in wire))
    yield from send(api, request, {"events": wire})


# Rollouts (docs/rollout.md)


def start_rollout(
    api: ClientBase,
    from_policy: str,
    to_policy: str,
    steps: Sequence[int],
    scopes: Optional[Sequence[str]] = None,
    prefix: Optional[str] = None,
    rollout_id: Optional[str] = None,
    controller: Optional[str] = None,
    reason: Optional[str] = None,
    hold_seconds: Union[int, Sequence[int], None] = None,
    hold_extension_seconds: Optional[int] = None,
    gates: Optional[Sequence[RolloutGate]] = None,
    on_failure: Optional[str] = None,
) -> "CallSteps[Rollout]":
    """Operator: starts ramping ``to_policy`` over ``scopes`` (a list, up to 1,000) or a
    ``prefix`` by ``steps`` (increasing percentages, e.g. ``[5, 25, 50, 100]``) and moves the
    first step. The id is made here when not given, so a resend after a lost reply resumes the
    same rollout. With ``hold_seconds`` (one, or one per step) the server's driver holds each
    step, checks the ``gates`` (dicts with the wire's keys) and moves the next one; a failed gate
    rolls back, or pauses with ``on_failure="pause"``."""
    body = _req.body(
        rollout_id=rollout_id or str(uuid.uuid4()),
        from_policy=from_policy,
        to_policy=to_policy,
        prefix=prefix,
        controller=controller,
        reason=reason,
        hold_extension_seconds=hold_extension_seconds,
        on_failure=on_failure,
    )
    if scopes is not None:
        body["scopes"] = list(scopes)
    body["steps"] = list(steps)
    if hold_seconds is not None:
        body["holdSeconds"] = hold_seconds if isinstance(hold_seconds, int) else list(hold_seconds)
    if gates is not None:
        body["gates"] = [dict(gate) for gate in gates]
    answer = yield from send_json(api, route("startRollout"), body)
    return cast(Rollout, answer)


def list_rollouts(api: ClientBase, status: Optional[str] = None) -> "CallSteps[List[Rollout]]":
    """Operator: the tenant's rollouts by id, those in ``status`` only when given."""
    answer = yield from send_json(api, route("listRollouts", query=_req.query(status=status)))
    return [cast(Rollout, item) for item in answer["items"]]


def get_rollout(api: ClientBase, rollout_id: str) -> "CallSteps[Optional[Rollout]]":
    request = route("getRollout", {"rolloutId": rollout_id})
    answer = yield from json_or_none(api, "not_found", request)
    return None if answer is None else cast(Rollout, answer)


def advance_rollout(
    api: ClientBase, rollout_id: str, revision: Optional[int] = None, reason: Optional[str] = None
) -> "CallSteps[Rollout]":
    """Operator: moves the next step (an interrupted step is resumed instead). Given
    ``revision``, only if the rollout is still there (``RolloutConflictError`` otherwise). Never
    sent again after a lost reply: read the rollout and send it with its revision."""
    return (yield from _rollout_command(api, "advanceRollout", rollout_id, revision, reason))


def pause_rollout(
    api: ClientBase, rollout_id: str, revision: Optional[int] = None, reason: Optional[str] = None
) -> "CallSteps[Rollout]":
    """Operator: no step advances until :meth:`resume_rollout`."""
    return (yield from _rollout_command(api, "pauseRollout", rollout_id, revision, reason))


def resume_rollout(
    api: ClientBase, rollout_id: str, revision: Optional[int] = None, reason: Optional[str] = None
) -> "CallSteps[Rollout]":
    return (yield from _rollout_command(api, "resumeRollout", rollout_id, revision, reason))


def promote_rollout(
    api: ClientBase, rollout_id: str, revision: Optional[int] = None, reason: Optional[str] = None
) -> "CallSteps[Rollout]":
    """Operator: ramps to 100 % in one step."""
    return (yield from _rollout_command(api, "promoteRollout", rollout_id, revision, reason))


def rollback_rollout(
    api: ClientBase,
    rollout_id: str,
    revision: Optional[int] = None,
    reason: Optional[str] = None,
    cancel_intents: bool = False,
) -> "CallSteps[Rollout]":
    """Operator: moves every scope the rollout moved or pinned, still on its new policy, back
    to the old one with a new fence, so the new version's late commits are refused. Sent again,
    it resumes. ``cancel_intents=True`` also cancels those scopes' pending intents committed
    under the new policy."""
    body = _req.body(
        revision=revision, reason=reason, cancel_intents=True if cancel_intents else None
    )
    request = route("rollbackRollout", {"rolloutId": rollout_id})
    answer = yield from send_json(api, request, body)
    return cast(Rollout, answer)


def rollout_report(api: ClientBase, rollout_id: str) -> "CallSteps[Optional[RolloutReport]]":
    """Operator: per step, scopes moved and commits accepted; after a rollback, the stale
    attempts and how many were accepted (``report["rollback"]["staleAccepted"]``, must be 0)."""
    request = route("rolloutReport", {"rolloutId": rollout_id})
    answer = yield from json_or_none(api, "not_found", request)
    return None if answer is None else cast(RolloutReport, answer)


# Audit and verification


def audit(
    api: ClientBase,
    scope: Optional[str] = None,
    kind: Optional[str] = None,
    outcome: Optional[str] = None,
    after_seq: Optional[int] = None,
    limit: Optional[int] = None,
) -> "CallSteps[JsonObject]":
    """Operator: ``{"items": [entry], "nextAfterSeq": n or None}``."""
    query = _req.query(scope=scope, kind=kind, outcome=outcome, after_seq=after_seq, limit=limit)
    answer = yield from send_json(api, route("audit", query=query))
    return answer


def verify(api: ClientBase) -> "CallSteps[VerifyReport]":
    """Operator: replays the tenant's audit log and reports every violation."""
    answer = yield from send_json(api, route("verify"))
    return from_wire(VerifyReport, answer)


# Tokens (the admin token)


def create_token(
    api: ClientBase,
    tenant: str,
    role: str,
    label: Optional[str] = None,
    may_take_over: Optional[Sequence[str]] = None,
) -> "CallSteps[JsonObject]":
    """Admin: ``{"id", "token", "tenant", "role"}``; the token is shown only here.

    ``may_take_over`` (scope name prefixes) gives a worker token the take-over right: it may
    take over a scope whose name starts with one of them."""
    body = _req.body(tenant=tenant, role=role, label=label)
    if may_take_over is not None:
        body["mayTakeOver"] = list(may_take_over)
    answer = yield from send_json(api, route("createToken"), body)
    return answer


def list_tokens(api: ClientBase, tenant: Optional[str] = None) -> "CallSteps[List[JsonObject]]":
    """Admin: the tokens (never a token or its hash)."""
    answer = yield from send_json(api, route("listTokens", query=_req.query(tenant=tenant)))
    return list(answer["items"])


def revoke_token(api: ClientBase, token_id: str) -> "CallSteps[JsonObject]":
    answer = yield from send_json(api, route("deleteToken", {"id": token_id}))
    return answer


# Operations


def healthz(api: ClientBase) -> "CallSteps[JsonObject]":
    answer = yield from send_json(api, route("healthz"))
    return answer


def readyz(api: ClientBase) -> "CallSteps[bool]":
    """True when the server reaches its store."""
    try:
        yield from send(api, route("readyz"), retry=False)
    except FencegateError:
        return False
    return True


def metrics(api: ClientBase) -> "CallSteps[str]":
    reply = yield from send(api, route("metrics"), json=False)
    return reply.text


def openapi(api: ClientBase) -> "CallSteps[JsonObject]":
    answer = yield from send_json(api, route("openapi"))
    return answer


def _rollout_command(
    api: ClientBase, name: str, rollout_id: str, revision: Optional[int], reason: Optional[str]
) -> "CallSteps[Rollout]":
    """A change of a rollout's state, on its ``revision`` when given."""
    request = route(name, {"rolloutId": rollout_id})
    answer = yield from send_json(api, request, _req.body(revision=revision, reason=reason))
    return cast(Rollout, answer)


def _page(answer: JsonObject, item: Optional[type] = None) -> Page:
    """A list answer as a Page; its items read as ``item`` when given, else left as they came."""
    items = answer["items"]
    return Page(
        items=[from_wire(item, each) for each in items] if item is not None else list(items),
        next_cursor=answer.get("nextCursor"),
    )
