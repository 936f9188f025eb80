"""The API methods of ``Client`` and ``AsyncClient``, and the two client shapes as
Protocols, one method per function of _api.py, in the order of ``ClientBase.ROUTES``.

Generated from _api.py by scripts/write_client_methods.py; do not edit. The tests check
that it is current.
"""

from abc import abstractmethod
from typing import Any, Iterable, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

from . import _api
from ._base import FencegateError
from ._call_steps import Exchange, run_async, run_sync
from ._client_base import ClientBase
from ._wire import Reply
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
)


class BlockingMethods(ClientBase):
    """Every API call as a method that answers when the exchange is done."""

    @abstractmethod
    def _exchange(self, step: Exchange) -> Reply:
        """One HTTP exchange with the server."""

    def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
        policy_versions: Optional[Sequence[str]] = None,
    ) -> Grant:
        """``job`` (``job_id``, ``attempt``, ``states``) records the job's states in the jobs ledger
        in the same transaction as the grant, under the fence granted. A worker that can run either
        version of a rollout names both in ``policy_versions`` (instead of ``policy_version``); the
        grant's ``policy_version`` says which one applies to the scope."""
        _steps = _api.acquire(self, scope, holder, ttl_ms, policy_version, job, policy_versions)
        return run_sync(_steps, self._exchange)

    def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> Grant:
        _steps = _api.renew(self, scope, holder, fence, ttl_ms)
        return run_sync(_steps, self._exchange)

    def release(
        self,
        scope: str,
        holder: str,
        fence: int,
        job: Optional[Mapping[str, Any]] = None,
    ) -> ReleaseResult:
        """``job`` as for :meth:`acquire`, recorded with the release."""
        _steps = _api.release(self, scope, holder, fence, job)
        return run_sync(_steps, self._exchange)

    def cancel_intents(
        self,
        scope: str,
        holder: str,
        fence: int,
        committed_from: int,
        reason: Optional[str] = None,
    ) -> List[str]:
        """The holder (``holder`` at ``fence``, the scope's current fence) cancels the pending intents
        committed under fences from ``committed_from`` up to its own: those of the runs it
        superseded. Its fence and lease stay. The server cancels a page of at most 50 of them per
        request; this sends one request after another, each with the ``nextCursor`` of the one
        before, until the last page. Answers the effect keys cancelled, in key order. Cut short by an
        error, the pages before it stay done, and the same call again redoes them unchanged."""
        _steps = _api.cancel_intents(self, scope, holder, fence, committed_from, reason)
        return run_sync(_steps, self._exchange)

    def get_scope(self, scope: str) -> Optional[ScopeState]:
        _steps = _api.get_scope(self, scope)
        return run_sync(_steps, self._exchange)

    def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        _steps = _api.list_scopes(self, prefix, limit, cursor)
        return run_sync(_steps, self._exchange)

    def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Grant:
        """Operator: a new grant (fence + 1) regardless of the live lease."""
        _steps = _api.takeover(self, scope, holder, ttl_ms, policy_version, reason)
        return run_sync(_steps, self._exchange)

    def cancel(self, scope: str, reason: Optional[str] = None) -> CancelResult:
        """Operator: revokes authority (fence + 1, no holder); pending intents are cancelled."""
        _steps = _api.cancel(self, scope, reason)
        return run_sync(_steps, self._exchange)

    def delete_scope(self, scope: str, reason: Optional[str] = None) -> JsonObject:
        """Operator: fence + 1, the scope deleted and its records tombstoned; ``{"fence": n}``."""
        _steps = _api.delete_scope(self, scope, reason)
        return run_sync(_steps, self._exchange)

    def get_record(self, scope: str, name: str) -> RecordState:
        """The record; one that never existed reads ``exists=False, revision=0``."""
        _steps = _api.get_record(self, scope, name)
        return run_sync(_steps, self._exchange)

    def list_records(self, scope: str) -> List[RecordState]:
        """Every record of the scope by name (tombstones too). The server answers as many as one
        answer may hold and a ``nextCursor`` when more follow (a page its byte budget cut may be
        short); the rest is read page by page. The pages are not one snapshot."""
        _steps = _api.list_records(self, scope)
        return run_sync(_steps, self._exchange)

    def list_records_page(
        self,
        scope: str,
        prefix: Optional[str] = None,
        direction: str = "asc",
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        order: Optional[str] = None,
        after: Optional[str] = None,
    ) -> Page:
        """One page of the scope's records (tombstones too): names starting with ``prefix``, in
        ``order`` (``name``, the default, or ``revision``) and ``direction`` (``asc`` or
        ``desc``), at most ``limit`` (1 to 1,000, default 100), past ``after`` (a name) or from
        ``cursor`` (the previous page's ``next_cursor``). Items are ``RecordState``."""
        _steps = _api.list_records_page(self, scope, prefix, direction, limit, cursor, order, after)
        return run_sync(_steps, self._exchange)

    def read_records(
        self,
        scope: str,
        records: Sequence[str] = (),
        pages: Sequence[Mapping[str, Any]] = (),
    ) -> RecordReads:
        """Records by name and pages of records of one scope in one exchange, each as
        :meth:`get_record` and :meth:`list_records_page` read it (a page's keys are that method's
        arguments: ``prefix``, ``order``, ``direction``, ``after``, ``limit``, ``cursor``), in the
        order asked; not one snapshot. At most 64 reads, records and pages together, reading at
        most 1,000 records (a name counts one, a page its limit) and naming at most as many
        records as the server's byte budget holds of the largest values (4 by default). The
        answer shares that budget: a page may end early, or hold nothing once earlier reads spent
        it; its ``next_cursor`` then reads on."""
        _steps = _api.read_records(self, scope, records, pages)
        return run_sync(_steps, self._exchange)

    def commit(
        self,
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
    ) -> CommitResult:
        """One atomic commit. Returns ``committed`` or ``rejected`` (``result.error.code``).

        ``release=True`` makes it the run's last commit: committed, it also releases the lease in
        its transaction, recording ``job`` (as for :meth:`release`) with it.

        When an attempt's outcome is unknown, the stored outcome of ``operation_id`` is read:
        it is the answer when there is one, else the same commit is sent again. Still unknown
        after the retries, it is settled with ``abandon_operation`` (the stored outcome, or
        ``operation_abandoned``); with ``settle_unknown=False`` it raises
        ``OutcomeUnknownError`` instead, and the caller may send the same commit again.
        """
        _steps = _api.commit(
            self,
            scope,
            fence,
            operation_id,
            writes,
            reads,
            intents,
            task_id,
            policy_version,
            settle_unknown,
            release,
            job,
        )
        return run_sync(_steps, self._exchange)

    def commit_many(
        self,
        commits: Sequence[Mapping[str, Any]],
        settle_unknown: bool = True,
    ) -> List[Union[CommitResult, FencegateError]]:
        """Up to 64 commits in one request (``POST /v1/commits``; more than one when the body limit,
        the client's ``max_body_bytes`` of 1 MiB by default, splits them), each a mapping of
        :meth:`commit`'s arguments (``scope``, ``fence``, ``operation_id``, ``writes``, ...). Answers
        one item per commit, in order: its ``CommitResult``, or the error its commit alone would
        raise (an invalid commit is refused on its own). A batch the server refuses whole (over its
        limit, not a valid body) is sent commit by commit. A batch whose reply was lost is sent again
        as it was: each operationId applies its commit at most once, so the commits that landed
        answer their stored outcomes. A commit still unknown after the retries is settled as
        :meth:`commit` settles one."""
        _steps = _api.commit_many(self, commits, settle_unknown)
        return run_sync(_steps, self._exchange)

    def get_operation(self, operation_id: str) -> Optional[CommitResult]:
        """The stored outcome, exactly as first answered; None: no outcome *yet* (see abandon)."""
        _steps = _api.get_operation(self, operation_id)
        return run_sync(_steps, self._exchange)

    def abandon_operation(self, operation_id: str, reason: Optional[str] = None) -> CommitResult:
        """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good.

        From then on every commit with this id, in flight or later, gets that same answer.
        """
        _steps = _api.abandon_operation(self, operation_id, reason)
        return run_sync(_steps, self._exchange)

    def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        _steps = _api.list_intents(self, scope, status, limit, cursor)
        return run_sync(_steps, self._exchange)

    def get_intent(self, effect_key: str) -> Optional[JsonObject]:
        _steps = _api.get_intent(self, effect_key)
        return run_sync(_steps, self._exchange)

    def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> List[JsonObject]:
        """Claims due intents. Never sent again after a lost reply: those claims lapse after
        ``ttl_ms`` and are claimed again."""
        _steps = _api.claim_intents(self, dispatcher, ttl_ms, limit, targets)
        return run_sync(_steps, self._exchange)

    def complete_intent(
        self,
        effect_key: str,
        claim_fence: int,
        outcome: str,
        retryable: Optional[bool] = None,
        provider_ref: Optional[str] = None,
        error: Optional[str] = None,
        retry_after_ms: Optional[int] = None,
        code: Optional[str] = None,
    ) -> JsonObject:
        """Records a delivery outcome; applied only under the current claim fence, so resent after
        a lost reply. A resend answered ``stale_claim`` says ``details["afterLostReply"]``: the
        lost attempt may be the one that recorded it (``get_intent`` shows the status).
        ``code="target_not_allowed"`` (with ``outcome="failed"``) audits a refusal to send."""
        _steps = _api.complete_intent(
            self,
            effect_key,
            claim_fence,
            outcome,
            retryable,
            provider_ref,
            error,
            retry_after_ms,
            code,
        )
        return run_sync(_steps, self._exchange)

    def register_policy(
        self,
        version: str,
        digest: Optional[str] = None,
        description: Optional[str] = None,
    ) -> Tuple[JsonObject, bool]:
        """Operator: ``(policy, created)``; created is False for the same version again."""
        _steps = _api.register_policy(self, version, digest, description)
        return run_sync(_steps, self._exchange)

    def list_policies(self) -> List[JsonObject]:
        _steps = _api.list_policies(self)
        return run_sync(_steps, self._exchange)

    def cutover(
        self,
        to_policy: str,
        holder: str,
        cutover_id: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        prefix: Optional[str] = None,
        lease_ttl_ms: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> JsonObject:
        """Operator: moves scopes to a policy. The id is made here when not given, so a resend
        after a lost reply is the same, resumable cutover."""
        _steps = _api.cutover(
            self,
            to_policy,
            holder,
            cutover_id,
            scopes,
            prefix,
            lease_ttl_ms,
            reason,
        )
        return run_sync(_steps, self._exchange)

    def list_cutovers(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """Operator: cutovers, newest first."""
        _steps = _api.list_cutovers(self, limit, cursor)
        return run_sync(_steps, self._exchange)

    def cutover_report(self, cutover_id: str) -> Optional[JsonObject]:
        _steps = _api.cutover_report(self, cutover_id)
        return run_sync(_steps, self._exchange)

    def start_rollout(
        self,
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
    ) -> Rollout:
        """Operator: starts ramping ``to_policy`` over ``scopes`` (a list, up to 1,000) or a
        ``prefix`` by ``steps`` (increasing percentages, e.g. ``[5, 25, 50, 100]``) and moves the
        first step. The id is made here when not given, so a resend after a lost reply resumes the
        same rollout. With ``hold_seconds`` (one, or one per step) the server's driver holds each
        step, checks the ``gates`` (dicts with the wire's keys) and moves the next one; a failed gate
        rolls back, or pauses with ``on_failure="pause"``."""
        _steps = _api.start_rollout(
            self,
            from_policy,
            to_policy,
            steps,
            scopes,
            prefix,
            rollout_id,
            controller,
            reason,
            hold_seconds,
            hold_extension_seconds,
            gates,
            on_failure,
        )
        return run_sync(_steps, self._exchange)

    def list_rollouts(self, status: Optional[str] = None) -> List[Rollout]:
        """Operator: the tenant's rollouts by id, those in ``status`` only when given."""
        _steps = _api.list_rollouts(self, status)
        return run_sync(_steps, self._exchange)

    def get_rollout(self, rollout_id: str) -> Optional[Rollout]:
        _steps = _api.get_rollout(self, rollout_id)
        return run_sync(_steps, self._exchange)

    def advance_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: moves the next step (an interrupted step is resumed instead). Given
        ``revision``, only if the rollout is still there (``RolloutConflictError`` otherwise). Never
        sent again after a lost reply: read the rollout and send it with its revision."""
        _steps = _api.advance_rollout(self, rollout_id, revision, reason)
        return run_sync(_steps, self._exchange)

    def pause_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: no step advances until :meth:`resume_rollout`."""
        _steps = _api.pause_rollout(self, rollout_id, revision, reason)
        return run_sync(_steps, self._exchange)

    def resume_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        _steps = _api.resume_rollout(self, rollout_id, revision, reason)
        return run_sync(_steps, self._exchange)

    def promote_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: ramps to 100 % in one step."""
        _steps = _api.promote_rollout(self, rollout_id, revision, reason)
        return run_sync(_steps, self._exchange)

    def rollback_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
        cancel_intents: bool = False,
    ) -> Rollout:
        """Operator: moves every scope the rollout moved or pinned, still on its new policy, back
        to the old one with a new fence, so the new version's late commits are refused. Sent again,
        it resumes. ``cancel_intents=True`` also cancels those scopes' pending intents committed
        under the new policy."""
        _steps = _api.rollback_rollout(self, rollout_id, revision, reason, cancel_intents)
        return run_sync(_steps, self._exchange)

    def rollout_report(self, rollout_id: str) -> Optional[RolloutReport]:
        """Operator: per step, scopes moved and commits accepted; after a rollback, the stale
        attempts and how many were accepted (``report["rollback"]["staleAccepted"]``, must be 0)."""
        _steps = _api.rollout_report(self, rollout_id)
        return run_sync(_steps, self._exchange)

    def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Reports queue job events. Resent after a lost reply only when every event has ``at``."""
        _steps = _api.record_job_events(self, events)
        run_sync(_steps, self._exchange)

    def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> JsonObject:
        """Operator: ``{"items": [entry], "nextAfterSeq": n or None}``."""
        _steps = _api.audit(self, scope, kind, outcome, after_seq, limit)
        return run_sync(_steps, self._exchange)

    def verify(self) -> VerifyReport:
        """Operator: replays the tenant's audit log and reports every violation."""
        _steps = _api.verify(self)
        return run_sync(_steps, self._exchange)

    def create_token(
        self,
        tenant: str,
        role: str,
        label: Optional[str] = None,
        may_take_over: Optional[Sequence[str]] = None,
    ) -> JsonObject:
        """Admin: ``{"id", "token", "tenant", "role"}``; the token is shown only here.

        ``may_take_over`` (scope name prefixes) gives a worker token the take-over right: it may
        take over a scope whose name starts with one of them."""
        _steps = _api.create_token(self, tenant, role, label, may_take_over)
        return run_sync(_steps, self._exchange)

    def list_tokens(self, tenant: Optional[str] = None) -> List[JsonObject]:
        """Admin: the tokens (never a token or its hash)."""
        _steps = _api.list_tokens(self, tenant)
        return run_sync(_steps, self._exchange)

    def revoke_token(self, token_id: str) -> JsonObject:
        _steps = _api.revoke_token(self, token_id)
        return run_sync(_steps, self._exchange)

    def healthz(self) -> JsonObject:
        _steps = _api.healthz(self)
        return run_sync(_steps, self._exchange)

    def readyz(self) -> bool:
        """True when the server reaches its store."""
        _steps = _api.readyz(self)
        return run_sync(_steps, self._exchange)

    def metrics(self) -> str:
        _steps = _api.metrics(self)
        return run_sync(_steps, self._exchange)

    def openapi(self) -> JsonObject:
        _steps = _api.openapi(self)
        return run_sync(_steps, self._exchange)


class AsyncMethods(ClientBase):
    """Every API call as a coroutine; the event loop runs on while it waits."""

    @abstractmethod
    async def _exchange(self, step: Exchange) -> Reply:
        """One HTTP exchange with the server."""

    async def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
        policy_versions: Optional[Sequence[str]] = None,
    ) -> Grant:
        """``job`` (``job_id``, ``attempt``, ``states``) records the job's states in the jobs ledger
        in the same transaction as the grant, under the fence granted. A worker that can run either
        version of a rollout names both in ``policy_versions`` (instead of ``policy_version``); the
        grant's ``policy_version`` says which one applies to the scope."""
        _steps = _api.acquire(self, scope, holder, ttl_ms, policy_version, job, policy_versions)
        return await run_async(_steps, self._exchange)

    async def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> Grant:
        _steps = _api.renew(self, scope, holder, fence, ttl_ms)
        return await run_async(_steps, self._exchange)

    async def release(
        self,
        scope: str,
        holder: str,
        fence: int,
        job: Optional[Mapping[str, Any]] = None,
    ) -> ReleaseResult:
        """``job`` as for :meth:`acquire`, recorded with the release."""
        _steps = _api.release(self, scope, holder, fence, job)
        return await run_async(_steps, self._exchange)

    async def cancel_intents(
        self,
        scope: str,
        holder: str,
        fence: int,
        committed_from: int,
        reason: Optional[str] = None,
    ) -> List[str]:
        """The holder (``holder`` at ``fence``, the scope's current fence) cancels the pending intents
        committed under fences from ``committed_from`` up to its own: those of the runs it
        superseded. Its fence and lease stay. The server cancels a page of at most 50 of them per
        request; this sends one request after another, each with the ``nextCursor`` of the one
        before, until the last page. Answers the effect keys cancelled, in key order. Cut short by an
        error, the pages before it stay done, and the same call again redoes them unchanged."""
        _steps = _api.cancel_intents(self, scope, holder, fence, committed_from, reason)
        return await run_async(_steps, self._exchange)

    async def get_scope(self, scope: str) -> Optional[ScopeState]:
        _steps = _api.get_scope(self, scope)
        return await run_async(_steps, self._exchange)

    async def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        _steps = _api.list_scopes(self, prefix, limit, cursor)
        return await run_async(_steps, self._exchange)

    async def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Grant:
        """Operator: a new grant (fence + 1) regardless of the live lease."""
        _steps = _api.takeover(self, scope, holder, ttl_ms, policy_version, reason)
        return await run_async(_steps, self._exchange)

    async def cancel(self, scope: str, reason: Optional[str] = None) -> CancelResult:
        """Operator: revokes authority (fence + 1, no holder); pending intents are cancelled."""
        _steps = _api.cancel(self, scope, reason)
        return await run_async(_steps, self._exchange)

    async def delete_scope(self, scope: str, reason: Optional[str] = None) -> JsonObject:
        """Operator: fence + 1, the scope deleted and its records tombstoned; ``{"fence": n}``."""
        _steps = _api.delete_scope(self, scope, reason)
        return await run_async(_steps, self._exchange)

    async def get_record(self, scope: str, name: str) -> RecordState:
        """The record; one that never existed reads ``exists=False, revision=0``."""
        _steps = _api.get_record(self, scope, name)
        return await run_async(_steps, self._exchange)

    async def list_records(self, scope: str) -> List[RecordState]:
        """Every record of the scope by name (tombstones too). The server answers as many as one
        answer may hold and a ``nextCursor`` when more follow (a page its byte budget cut may be
        short); the rest is read page by page. The pages are not one snapshot."""
        _steps = _api.list_records(self, scope)
        return await run_async(_steps, self._exchange)

    async def list_records_page(
        self,
        scope: str,
        prefix: Optional[str] = None,
        direction: str = "asc",
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        order: Optional[str] = None,
        after: Optional[str] = None,
    ) -> Page:
        """One page of the scope's records (tombstones too): names starting with ``prefix``, in
        ``order`` (``name``, the default, or ``revision``) and ``direction`` (``asc`` or
        ``desc``), at most ``limit`` (1 to 1,000, default 100), past ``after`` (a name) or from
        ``cursor`` (the previous page's ``next_cursor``). Items are ``RecordState``."""
        _steps = _api.list_records_page(self, scope, prefix, direction, limit, cursor, order, after)
        return await run_async(_steps, self._exchange)

    async def read_records(
        self,
        scope: str,
        records: Sequence[str] = (),
        pages: Sequence[Mapping[str, Any]] = (),
    ) -> RecordReads:
        """Records by name and pages of records of one scope in one exchange, each as
        :meth:`get_record` and :meth:`list_records_page` read it (a page's keys are that method's
        arguments: ``prefix``, ``order``, ``direction``, ``after``, ``limit``, ``cursor``), in the
        order asked; not one snapshot. At most 64 reads, records and pages together, reading at
        most 1,000 records (a name counts one, a page its limit) and naming at most as many
        records as the server's byte budget holds of the largest values (4 by default). The
        answer shares that budget: a page may end early, or hold nothing once earlier reads spent
        it; its ``next_cursor`` then reads on."""
        _steps = _api.read_records(self, scope, records, pages)
        return await run_async(_steps, self._exchange)

    async def commit(
        self,
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
    ) -> CommitResult:
        """One atomic commit. Returns ``committed`` or ``rejected`` (``result.error.code``).

        ``release=True`` makes it the run's last commit: committed, it also releases the lease in
        its transaction, recording ``job`` (as for :meth:`release`) with it.

        When an attempt's outcome is unknown, the stored outcome of ``operation_id`` is read:
        it is the answer when there is one, else the same commit is sent again. Still unknown
        after the retries, it is settled with ``abandon_operation`` (the stored outcome, or
        ``operation_abandoned``); with ``settle_unknown=False`` it raises
        ``OutcomeUnknownError`` instead, and the caller may send the same commit again.
        """
        _steps = _api.commit(
            self,
            scope,
            fence,
            operation_id,
            writes,
            reads,
            intents,
            task_id,
            policy_version,
            settle_unknown,
            release,
            job,
        )
        return await run_async(_steps, self._exchange)

    async def commit_many(
        self,
        commits: Sequence[Mapping[str, Any]],
        settle_unknown: bool = True,
    ) -> List[Union[CommitResult, FencegateError]]:
        """Up to 64 commits in one request (``POST /v1/commits``; more than one when the body limit,
        the client's ``max_body_bytes`` of 1 MiB by default, splits them), each a mapping of
        :meth:`commit`'s arguments (``scope``, ``fence``, ``operation_id``, ``writes``, ...). Answers
        one item per commit, in order: its ``CommitResult``, or the error its commit alone would
        raise (an invalid commit is refused on its own). A batch the server refuses whole (over its
        limit, not a valid body) is sent commit by commit. A batch whose reply was lost is sent again
        as it was: each operationId applies its commit at most once, so the commits that landed
        answer their stored outcomes. A commit still unknown after the retries is settled as
        :meth:`commit` settles one."""
        _steps = _api.commit_many(self, commits, settle_unknown)
        return await run_async(_steps, self._exchange)

    async def get_operation(self, operation_id: str) -> Optional[CommitResult]:
        """The stored outcome, exactly as first answered; None: no outcome *yet* (see abandon)."""
        _steps = _api.get_operation(self, operation_id)
        return await run_async(_steps, self._exchange)

    async def abandon_operation(
        self,
        operation_id: str,
        reason: Optional[str] = None,
    ) -> CommitResult:
        """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good.

        From then on every commit with this id, in flight or later, gets that same answer.
        """
        _steps = _api.abandon_operation(self, operation_id, reason)
        return await run_async(_steps, self._exchange)

    async def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        _steps = _api.list_intents(self, scope, status, limit, cursor)
        return await run_async(_steps, self._exchange)

    async def get_intent(self, effect_key: str) -> Optional[JsonObject]:
        _steps = _api.get_intent(self, effect_key)
        return await run_async(_steps, self._exchange)

    async def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> List[JsonObject]:
        """Claims due intents. Never sent again after a lost reply: those claims lapse after
        ``ttl_ms`` and are claimed again."""
        _steps = _api.claim_intents(self, dispatcher, ttl_ms, limit, targets)
        return await run_async(_steps, self._exchange)

    async def complete_intent(
        self,
        effect_key: str,
        claim_fence: int,
        outcome: str,
        retryable: Optional[bool] = None,
        provider_ref: Optional[str] = None,
        error: Optional[str] = None,
        retry_after_ms: Optional[int] = None,
        code: Optional[str] = None,
    ) -> JsonObject:
        """Records a delivery outcome; applied only under the current claim fence, so resent after
        a lost reply. A resend answered ``stale_claim`` says ``details["afterLostReply"]``: the
        lost attempt may be the one that recorded it (``get_intent`` shows the status).
        ``code="target_not_allowed"`` (with ``outcome="failed"``) audits a refusal to send."""
        _steps = _api.complete_intent(
            self,
            effect_key,
            claim_fence,
            outcome,
            retryable,
            provider_ref,
            error,
            retry_after_ms,
            code,
        )
        return await run_async(_steps, self._exchange)

    async def register_policy(
        self,
        version: str,
        digest: Optional[str] = None,
        description: Optional[str] = None,
    ) -> Tuple[JsonObject, bool]:
        """Operator: ``(policy, created)``; created is False for the same version again."""
        _steps = _api.register_policy(self, version, digest, description)
        return await run_async(_steps, self._exchange)

    async def list_policies(self) -> List[JsonObject]:
        _steps = _api.list_policies(self)
        return await run_async(_steps, self._exchange)

    async def cutover(
        self,
        to_policy: str,
        holder: str,
        cutover_id: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        prefix: Optional[str] = None,
        lease_ttl_ms: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> JsonObject:
        """Operator: moves scopes to a policy. The id is made here when not given, so a resend
        after a lost reply is the same, resumable cutover."""
        _steps = _api.cutover(
            self,
            to_policy,
            holder,
            cutover_id,
            scopes,
            prefix,
            lease_ttl_ms,
            reason,
        )
        return await run_async(_steps, self._exchange)

    async def list_cutovers(
        self,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        """Operator: cutovers, newest first."""
        _steps = _api.list_cutovers(self, limit, cursor)
        return await run_async(_steps, self._exchange)

    async def cutover_report(self, cutover_id: str) -> Optional[JsonObject]:
        _steps = _api.cutover_report(self, cutover_id)
        return await run_async(_steps, self._exchange)

    async def start_rollout(
        self,
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
    ) -> Rollout:
        """Operator: starts ramping ``to_policy`` over ``scopes`` (a list, up to 1,000) or a
        ``prefix`` by ``steps`` (increasing percentages, e.g. ``[5, 25, 50, 100]``) and moves the
        first step. The id is made here when not given, so a resend after a lost reply resumes the
        same rollout. With ``hold_seconds`` (one, or one per step) the server's driver holds each
        step, checks the ``gates`` (dicts with the wire's keys) and moves the next one; a failed gate
        rolls back, or pauses with ``on_failure="pause"``."""
        _steps = _api.start_rollout(
            self,
            from_policy,
            to_policy,
            steps,
            scopes,
            prefix,
            rollout_id,
            controller,
            reason,
            hold_seconds,
            hold_extension_seconds,
            gates,
            on_failure,
        )
        return await run_async(_steps, self._exchange)

    async def list_rollouts(self, status: Optional[str] = None) -> List[Rollout]:
        """Operator: the tenant's rollouts by id, those in ``status`` only when given."""
        _steps = _api.list_rollouts(self, status)
        return await run_async(_steps, self._exchange)

    async def get_rollout(self, rollout_id: str) -> Optional[Rollout]:
        _steps = _api.get_rollout(self, rollout_id)
        return await run_async(_steps, self._exchange)

    async def advance_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: moves the next step (an interrupted step is resumed instead). Given
        ``revision``, only if the rollout is still there (``RolloutConflictError`` otherwise). Never
        sent again after a lost reply: read the rollout and send it with its revision."""
        _steps = _api.advance_rollout(self, rollout_id, revision, reason)
        return await run_async(_steps, self._exchange)

    async def pause_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: no step advances until :meth:`resume_rollout`."""
        _steps = _api.pause_rollout(self, rollout_id, revision, reason)
        return await run_async(_steps, self._exchange)

    async def resume_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        _steps = _api.resume_rollout(self, rollout_id, revision, reason)
        return await run_async(_steps, self._exchange)

    async def promote_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout:
        """Operator: ramps to 100 % in one step."""
        _steps = _api.promote_rollout(self, rollout_id, revision, reason)
        return await run_async(_steps, self._exchange)

    async def rollback_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
        cancel_intents: bool = False,
    ) -> Rollout:
        """Operator: moves every scope the rollout moved or pinned, still on its new policy, back
        to the old one with a new fence, so the new version's late commits are refused. Sent again,
        it resumes. ``cancel_intents=True`` also cancels those scopes' pending intents committed
        under the new policy."""
        _steps = _api.rollback_rollout(self, rollout_id, revision, reason, cancel_intents)
        return await run_async(_steps, self._exchange)

    async def rollout_report(self, rollout_id: str) -> Optional[RolloutReport]:
        """Operator: per step, scopes moved and commits accepted; after a rollback, the stale
        attempts and how many were accepted (``report["rollback"]["staleAccepted"]``, must be 0)."""
        _steps = _api.rollout_report(self, rollout_id)
        return await run_async(_steps, self._exchange)

    async def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Reports queue job events. Resent after a lost reply only when every event has ``at``."""
        _steps = _api.record_job_events(self, events)
        await run_async(_steps, self._exchange)

    async def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> JsonObject:
        """Operator: ``{"items": [entry], "nextAfterSeq": n or None}``."""
        _steps = _api.audit(self, scope, kind, outcome, after_seq, limit)
        return await run_async(_steps, self._exchange)

    async def verify(self) -> VerifyReport:
        """Operator: replays the tenant's audit log and reports every violation."""
        _steps = _api.verify(self)
        return await run_async(_steps, self._exchange)

    async def create_token(
        self,
        tenant: str,
        role: str,
        label: Optional[str] = None,
        may_take_over: Optional[Sequence[str]] = None,
    ) -> JsonObject:
        """Admin: ``{"id", "token", "tenant", "role"}``; the token is shown only here.

        ``may_take_over`` (scope name prefixes) gives a worker token the take-over right: it may
        take over a scope whose name starts with one of them."""
        _steps = _api.create_token(self, tenant, role, label, may_take_over)
        return await run_async(_steps, self._exchange)

    async def list_tokens(self, tenant: Optional[str] = None) -> List[JsonObject]:
        """Admin: the tokens (never a token or its hash)."""
        _steps = _api.list_tokens(self, tenant)
        return await run_async(_steps, self._exchange)

    async def revoke_token(self, token_id: str) -> JsonObject:
        _steps = _api.revoke_token(self, token_id)
        return await run_async(_steps, self._exchange)

    async def healthz(self) -> JsonObject:
        _steps = _api.healthz(self)
        return await run_async(_steps, self._exchange)

    async def readyz(self) -> bool:
        """True when the server reaches its store."""
        _steps = _api.readyz(self)
        return await run_async(_steps, self._exchange)

    async def metrics(self) -> str:
        _steps = _api.metrics(self)
        return await run_async(_steps, self._exchange)

    async def openapi(self) -> JsonObject:
        _steps = _api.openapi(self)
        return await run_async(_steps, self._exchange)


class ClientApi(Protocol):
    """What a ``fencegate.Client`` offers: every API call, answering when it is done."""

    def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
        policy_versions: Optional[Sequence[str]] = None,
    ) -> Grant: ...

    def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> Grant: ...

    def release(
        self,
        scope: str,
        holder: str,
        fence: int,
        job: Optional[Mapping[str, Any]] = None,
    ) -> ReleaseResult: ...

    def cancel_intents(
        self,
        scope: str,
        holder: str,
        fence: int,
        committed_from: int,
        reason: Optional[str] = None,
    ) -> List[str]: ...

    def get_scope(self, scope: str) -> Optional[ScopeState]: ...

    def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page: ...

    def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Grant: ...

    def cancel(self, scope: str, reason: Optional[str] = None) -> CancelResult: ...

    def delete_scope(self, scope: str, reason: Optional[str] = None) -> JsonObject: ...

    def get_record(self, scope: str, name: str) -> RecordState: ...

    def list_records(self, scope: str) -> List[RecordState]: ...

    def list_records_page(
        self,
        scope: str,
        prefix: Optional[str] = None,
        direction: str = "asc",
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        order: Optional[str] = None,
        after: Optional[str] = None,
    ) -> Page: ...

    def read_records(
        self,
        scope: str,
        records: Sequence[str] = (),
        pages: Sequence[Mapping[str, Any]] = (),
    ) -> RecordReads: ...

    def commit(
        self,
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
    ) -> CommitResult: ...

    def commit_many(
        self,
        commits: Sequence[Mapping[str, Any]],
        settle_unknown: bool = True,
    ) -> List[Union[CommitResult, FencegateError]]: ...

    def get_operation(self, operation_id: str) -> Optional[CommitResult]: ...

    def abandon_operation(
        self,
        operation_id: str,
        reason: Optional[str] = None,
    ) -> CommitResult: ...

    def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page: ...

    def get_intent(self, effect_key: str) -> Optional[JsonObject]: ...

    def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> List[JsonObject]: ...

    def complete_intent(
        self,
        effect_key: str,
        claim_fence: int,
        outcome: str,
        retryable: Optional[bool] = None,
        provider_ref: Optional[str] = None,
        error: Optional[str] = None,
        retry_after_ms: Optional[int] = None,
        code: Optional[str] = None,
    ) -> JsonObject: ...

    def register_policy(
        self,
        version: str,
        digest: Optional[str] = None,
        description: Optional[str] = None,
    ) -> Tuple[JsonObject, bool]: ...

    def list_policies(self) -> List[JsonObject]: ...

    def cutover(
        self,
        to_policy: str,
        holder: str,
        cutover_id: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        prefix: Optional[str] = None,
        lease_ttl_ms: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> JsonObject: ...

    def list_cutovers(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page: ...

    def cutover_report(self, cutover_id: str) -> Optional[JsonObject]: ...

    def start_rollout(
        self,
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
    ) -> Rollout: ...

    def list_rollouts(self, status: Optional[str] = None) -> List[Rollout]: ...

    def get_rollout(self, rollout_id: str) -> Optional[Rollout]: ...

    def advance_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    def pause_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    def resume_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    def promote_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    def rollback_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
        cancel_intents: bool = False,
    ) -> Rollout: ...

    def rollout_report(self, rollout_id: str) -> Optional[RolloutReport]: ...

    def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> None: ...

    def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> JsonObject: ...

    def verify(self) -> VerifyReport: ...

    def create_token(
        self,
        tenant: str,
        role: str,
        label: Optional[str] = None,
        may_take_over: Optional[Sequence[str]] = None,
    ) -> JsonObject: ...

    def list_tokens(self, tenant: Optional[str] = None) -> List[JsonObject]: ...

    def revoke_token(self, token_id: str) -> JsonObject: ...

    def healthz(self) -> JsonObject: ...

    def readyz(self) -> bool: ...

    def metrics(self) -> str: ...

    def openapi(self) -> JsonObject: ...


class AsyncClientApi(Protocol):
    """What a ``fencegate.AsyncClient`` offers: every API call, as a coroutine."""

    async def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
        policy_versions: Optional[Sequence[str]] = None,
    ) -> Grant: ...

    async def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> Grant: ...

    async def release(
        self,
        scope: str,
        holder: str,
        fence: int,
        job: Optional[Mapping[str, Any]] = None,
    ) -> ReleaseResult: ...

    async def cancel_intents(
        self,
        scope: str,
        holder: str,
        fence: int,
        committed_from: int,
        reason: Optional[str] = None,
    ) -> List[str]: ...

    async def get_scope(self, scope: str) -> Optional[ScopeState]: ...

    async def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page: ...

    async def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Grant: ...

    async def cancel(self, scope: str, reason: Optional[str] = None) -> CancelResult: ...

    async def delete_scope(self, scope: str, reason: Optional[str] = None) -> JsonObject: ...

    async def get_record(self, scope: str, name: str) -> RecordState: ...

    async def list_records(self, scope: str) -> List[RecordState]: ...

    async def list_records_page(
        self,
        scope: str,
        prefix: Optional[str] = None,
        direction: str = "asc",
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        order: Optional[str] = None,
        after: Optional[str] = None,
    ) -> Page: ...

    async def read_records(
        self,
        scope: str,
        records: Sequence[str] = (),
        pages: Sequence[Mapping[str, Any]] = (),
    ) -> RecordReads: ...

    async def commit(
        self,
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
    ) -> CommitResult: ...

    async def commit_many(
        self,
        commits: Sequence[Mapping[str, Any]],
        settle_unknown: bool = True,
    ) -> List[Union[CommitResult, FencegateError]]: ...

    async def get_operation(self, operation_id: str) -> Optional[CommitResult]: ...

    async def abandon_operation(
        self,
        operation_id: str,
        reason: Optional[str] = None,
    ) -> CommitResult: ...

    async def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page: ...

    async def get_intent(self, effect_key: str) -> Optional[JsonObject]: ...

    async def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> List[JsonObject]: ...

    async def complete_intent(
        self,
        effect_key: str,
        claim_fence: int,
        outcome: str,
        retryable: Optional[bool] = None,
        provider_ref: Optional[str] = None,
        error: Optional[str] = None,
        retry_after_ms: Optional[int] = None,
        code: Optional[str] = None,
    ) -> JsonObject: ...

    async def register_policy(
        self,
        version: str,
        digest: Optional[str] = None,
        description: Optional[str] = None,
    ) -> Tuple[JsonObject, bool]: ...

    async def list_policies(self) -> List[JsonObject]: ...

    async def cutover(
        self,
        to_policy: str,
        holder: str,
        cutover_id: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        prefix: Optional[str] = None,
        lease_ttl_ms: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> JsonObject: ...

    async def list_cutovers(
        self,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page: ...

    async def cutover_report(self, cutover_id: str) -> Optional[JsonObject]: ...

    async def start_rollout(
        self,
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
    ) -> Rollout: ...

    async def list_rollouts(self, status: Optional[str] = None) -> List[Rollout]: ...

    async def get_rollout(self, rollout_id: str) -> Optional[Rollout]: ...

    async def advance_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    async def pause_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    async def resume_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    async def promote_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> Rollout: ...

    async def rollback_rollout(
        self,
        rollout_id: str,
        revision: Optional[int] = None,
        reason: Optional[str] = None,
        cancel_intents: bool = False,
    ) -> Rollout: ...

    async def rollout_report(self, rollout_id: str) -> Optional[RolloutReport]: ...

    async def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> None: ...

    async def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> JsonObject: ...

    async def verify(self) -> VerifyReport: ...

    async def create_token(
        self,
        tenant: str,
        role: str,
        label: Optional[str] = None,
        may_take_over: Optional[Sequence[str]] = None,
    ) -> JsonObject: ...

    async def list_tokens(self, tenant: Optional[str] = None) -> List[JsonObject]: ...

    async def revoke_token(self, token_id: str) -> JsonObject: ...

    async def healthz(self) -> JsonObject: ...

    async def readyz(self) -> bool: ...

    async def metrics(self) -> str: ...

    async def openapi(self) -> JsonObject: ...
