"""The fencegate HTTP API as plans (see _plans.py), written once for ``Client`` and
``AsyncClient``, with the retry rules of the TypeScript FencegateClient.

Retries are limited to what cannot do harm: a request that never reached the server, or that the
server answered ``store_unavailable`` (nothing changed), is sent again; after a lost reply, reads
and the writes that are idempotent by construction (complete_intent, register_policy, a cutover
by its id, job events that carry ``at``, abandon_operation) are sent again; lease operations and
claims are not (they may have taken effect): that is ``OutcomeUnknownError``. So is a write
answered by a redirect (never followed) or by a proxy's 502, 503 or 504 without a fencegate
error body: the request may have been passed on before the answer was made.

A commit carries an operationId. When an attempt's outcome is unknown (a lost reply,
``outcome_unknown``, a server fault, a redirect or a gateway answer), the stored outcome of that
operationId decides: committed or rejected is the answer; none stored means the commit has not
applied yet, and the same commit is sent again (its operationId applies it at most once). Still
unknown after the retries, the client settles it with ``abandon_operation``: the server answers
the stored outcome if the commit was stored meanwhile, otherwise stores ``operation_abandoned``
so that commit can never apply. Nothing else decides it; if abandon cannot be reached either, the
answer is ``OutcomeUnknownError``.
"""

import functools
import inspect
import uuid
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypeVar

from . import _requests as _req
from ._answers import describe, error_from, is_commit_answer, leaves_outcome_unknown
from ._answers import nothing_changed, unusable, wire_error, worth_resending
from ._base import FencegateError
from ._plans import Exchange, Plan, backoff
from ._endpoint import Endpoint
from ._wire import LOST, MAX_ANSWER_BYTES, NOT_SENT, Reply, TransportError
from .errors import InternalError, OutcomeUnknownError, StoreUnavailableError
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
    ScopeState,
    VerifyReport,
    camel,
    from_wire,
    part_to_wire,
)

T = TypeVar("T")

#: Codes of an answer that says only that the server cannot answer now.
_CANNOT_ANSWER_NOW = ("store_unavailable", "internal_error", "outcome_unknown")

#: How a request may be retried after its reply was lost.
READ = "read"  # sent again
IDEMPOTENT = "idempotent"  # a write that cannot apply twice: sent again
WRITE = "write"  # may have taken effect: never sent again after a lost reply

#: The most records one page of the server may be asked for.
MAX_LIST_LIMIT = 1000


class ApiPlans:
    """Every API call as a plan; a client subclass runs them (``install_calls``)."""

    #: Every route of the HTTP API, by the method that calls it (paths as in /openapi.json).
    ROUTES: Dict[str, Tuple[str, str]] = {
        "acquire": ("POST", "/v1/leases/acquire"),
        "renew": ("POST", "/v1/leases/renew"),
        "release": ("POST", "/v1/leases/release"),
        "get_scope": ("GET", "/v1/scopes/{scope}"),
        "list_scopes": ("GET", "/v1/scopes"),
        "takeover": ("POST", "/v1/scopes/{scope}/takeover"),
        "cancel": ("POST", "/v1/scopes/{scope}/cancel"),
        "delete_scope": ("DELETE", "/v1/scopes/{scope}"),
        "get_record": ("GET", "/v1/scopes/{scope}/records/{name}"),
        "list_records": ("GET", "/v1/scopes/{scope}/records"),
        "list_records_page": ("GET", "/v1/scopes/{scope}/records"),
        "read_records": ("POST", "/v1/scopes/{scope}/reads"),
        "commit": ("POST", "/v1/commit"),
        "get_operation": ("GET", "/v1/operations/{operationId}"),
        "abandon_operation": ("POST", "/v1/operations/{operationId}/abandon"),
        "list_intents": ("GET", "/v1/intents"),
        "get_intent": ("GET", "/v1/intents/{effectKey}"),
        "claim_intents": ("POST", "/v1/intents/claim"),
        "complete_intent": ("POST", "/v1/intents/{effectKey}/complete"),
        "register_policy": ("POST", "/v1/policies"),
        "list_policies": ("GET", "/v1/policies"),
        "cutover": ("POST", "/v1/cutovers"),
        "list_cutovers": ("GET", "/v1/cutovers"),
        "cutover_report": ("GET", "/v1/cutovers/{cutoverId}/report"),
        "record_job_events": ("POST", "/v1/jobs/events"),
        "audit": ("GET", "/v1/audit"),
        "verify": ("GET", "/v1/verify"),
        "create_token": ("POST", "/v1/admin/tokens"),
        "list_tokens": ("GET", "/v1/admin/tokens"),
        "revoke_token": ("DELETE", "/v1/admin/tokens/{id}"),
        "healthz": ("GET", "/healthz"),
        "readyz": ("GET", "/readyz"),
        "metrics": ("GET", "/metrics"),
        "openapi": ("GET", "/openapi.json"),
    }

    def __init__(
        self,
        base_url: str,
        token: str,
        timeout: float = 10.0,
        retries: int = 3,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        """``timeout``: the most seconds one exchange with the server takes, connecting and
        answering together; ``retries``: extra attempts where allowed; ``max_answer_bytes``: the
        longest answer body read (a longer one is an error, not read to its end)."""
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.max_answer_bytes = max_answer_bytes
        self._endpoint = Endpoint(self.base_url)

    # Leases and scopes

    def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
    ) -> "Plan[Grant]":
        """``job`` (``job_id``, ``attempt``, ``states``) records the job's states in the jobs ledger
        in the same transaction as the grant, under the fence granted."""
        body = _req.body(
            scope=scope,
            holder=holder,
            ttl_ms=ttl_ms,
            policy_version=policy_version,
            job=_req.job(job),
        )
        answer = yield from self._json(WRITE, "POST", "/v1/leases/acquire", body)
        return from_wire(Grant, answer)

    def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> "Plan[Grant]":
        body = _req.body(scope=scope, holder=holder, fence=fence, ttl_ms=ttl_ms)
        answer = yield from self._json(WRITE, "POST", "/v1/leases/renew", body)
        return from_wire(Grant, answer)

    def release(
        self, scope: str, holder: str, fence: int, job: Optional[Mapping[str, Any]] = None
    ) -> "Plan[ReleaseResult]":
        """``job`` as for :meth:`acquire`, recorded with the release."""
        body = _req.body(scope=scope, holder=holder, fence=fence, job=_req.job(job))
        answer = yield from self._json(WRITE, "POST", "/v1/leases/release", body)
        return from_wire(ReleaseResult, answer)

    def get_scope(self, scope: str) -> "Plan[Optional[ScopeState]]":
        answer = yield from self._or_none("scope_not_found", READ, "GET", _scope_path(scope))
        return None if answer is None else from_wire(ScopeState, answer)

    def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> "Plan[Page]":
        query = _req.query(prefix=prefix, limit=limit, cursor=cursor)
        answer = yield from self._json(READ, "GET", f"/v1/scopes{query}")
        return _page(answer, ScopeState)

    def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> "Plan[Grant]":
        """Operator: a new grant (fence + 1) regardless of the live lease."""
        body = _req.body(holder=holder, ttl_ms=ttl_ms, policy_version=policy_version, reason=reason)
        path = f"{_scope_path(scope)}/takeover"
        answer = yield from self._json(WRITE, "POST", path, body)
        return from_wire(Grant, answer)

    def cancel(self, scope: str, reason: Optional[str] = None) -> "Plan[CancelResult]":
        """Operator: revokes authority (fence + 1, no holder); pending intents are cancelled."""
        path = f"{_scope_path(scope)}/cancel"
        answer = yield from self._json(WRITE, "POST", path, _req.body(reason=reason))
        return from_wire(CancelResult, answer)

    def delete_scope(self, scope: str, reason: Optional[str] = None) -> "Plan[JsonObject]":
        """Operator: fence + 1, the scope deleted and its records tombstoned; ``{"fence": n}``."""
        body = _req.body(reason=reason) if reason is not None else None
        answer = yield from self._json(WRITE, "DELETE", _scope_path(scope), body)
        return answer

    # Records and commits

    def get_record(self, scope: str, name: str) -> "Plan[RecordState]":
        """The record; one that never existed reads ``exists=False, revision=0``."""
        path = f"{_scope_path(scope)}/records/{_req.segment(name, 'name')}"
        answer = yield from self._json(READ, "GET", path)
        return from_wire(RecordState, answer)

    def list_records(self, scope: str) -> "Plan[List[RecordState]]":
        """Every record of the scope by name (tombstones too). The server answers as many as one
        answer may hold and a ``nextCursor`` when more follow (a page its byte budget cut may be
        short); the rest is read page by page. The pages are not one snapshot."""
        path = f"{_scope_path(scope)}/records"
        answer = yield from self._json(READ, "GET", path)
        items = list(answer["items"])
        cursor = answer.get("nextCursor")
        while cursor is not None:
            query = _req.query(cursor=cursor, limit=MAX_LIST_LIMIT)
            answer = yield from self._json(READ, "GET", f"{path}{query}")
            items.extend(answer["items"])
            cursor = answer.get("nextCursor")
        return [from_wire(RecordState, item) for item in items]

    def list_records_page(
        self,
        scope: str,
        prefix: Optional[str] = None,
        direction: str = "asc",
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        order: Optional[str] = None,
        after: Optional[str] = None,
    ) -> "Plan[Page]":
        """One page of the scope's records (tombstones too): names starting with ``prefix``, in
        ``order`` (``name``, the default, or ``revision``) and ``direction`` (``asc`` or
        ``desc``), at most ``limit`` (1 to 1,000, default 100), past ``after`` (a name) or from
        ``cursor`` (the previous page's ``next_cursor``). Items are ``RecordState``."""
        query = _req.query(
            prefix=prefix, order=order, direction=direction, after=after, limit=limit, cursor=cursor
        )
        answer = yield from self._json(READ, "GET", f"{_scope_path(scope)}/records{query}")
        return _page(answer, RecordState)

    def read_records(
        self,
        scope: str,
        records: Sequence[str] = (),
        pages: Sequence[Mapping[str, Any]] = (),
    ) -> "Plan[RecordReads]":
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
        answer = yield from self._json(READ, "POST", f"{_scope_path(scope)}/reads", body)
        return RecordReads(
            records=[from_wire(RecordState, item) for item in answer["records"]],
            pages=[_page(page, RecordState) for page in answer["pages"]],
        )

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
    ) -> "Plan[CommitResult]":
        """One atomic commit. Returns ``committed`` or ``rejected`` (``result.error.code``).

        ``release=True`` makes it the run's last commit: committed, it also releases the lease in
        its transaction, recording ``job`` (as for :meth:`release`) with it.

        When an attempt's outcome is unknown, the stored outcome of ``operation_id`` is read:
        it is the answer when there is one, else the same commit is sent again. Still unknown
        after the retries, it is settled with ``abandon_operation`` (the stored outcome, or
        ``operation_abandoned``); with ``settle_unknown=False`` it raises
        ``OutcomeUnknownError`` instead, and the caller may send the same commit again.
        """
        body = _req.body(
            scope=scope,
            fence=fence,
            operation_id=operation_id,
            task_id=task_id,
            policy_version=policy_version,
            release=True if release else None,
            job=_req.job(job),
        )
        body["reads"] = [part_to_wire(part) for part in reads]
        body["writes"] = [part_to_wire(part) for part in writes]
        body["intents"] = [part_to_wire(part) for part in intents]
        last: FencegateError = StoreUnavailableError(f"could not reach {self.base_url}")
        unknown: Optional[str] = None  # why an attempt's outcome is unknown, once one's is
        for attempt in range(self.retries + 1):
            yield from backoff(attempt)
            try:
                reply = yield Exchange("POST", "/v1/commit", body, resendable=True)
            except TransportError as error:
                last = self._unreachable(error)
                if error.failure == NOT_SENT:
                    continue
                unknown = str(error)
            else:
                assert reply is not None
                answer = None if reply.unreadable is not None else reply.json()
                if reply.status in (200, 409) and is_commit_answer(answer):
                    return CommitResult.from_answer(answer)
                refusal = wire_error(reply)
                if refusal is not None and refusal.code == "store_unavailable":
                    last = refusal
                    continue
                if refusal is not None and refusal.code != "outcome_unknown" and reply.status < 500:
                    raise refusal
                # A server fault, outcome_unknown, a redirect, a gateway, an answer that is not a
                # commit's: the commit may have been stored.
                unknown = f"the commit {describe(reply)}" if refusal is None else refusal.message
            stored = yield from self._unless_unreachable(ApiPlans.get_operation(self, operation_id))
            if stored is not None:
                return stored
            # Nothing stored yet: the same commit again (its operationId applies it at most once).
        if unknown is None:
            raise last
        return (yield from self._unknown(operation_id, unknown, settle_unknown))

    def get_operation(self, operation_id: str) -> "Plan[Optional[CommitResult]]":
        """The stored outcome, exactly as first answered; None: no outcome *yet* (see abandon)."""
        path = f"/v1/operations/{_req.segment(operation_id, 'operationId')}"
        answer = yield from self._or_none("not_found", READ, "GET", path)
        return None if answer is None else CommitResult.from_answer(answer)

    def abandon_operation(self, operation_id: str, reason: Optional[str] = None) -> "Plan[CommitResult]":
        """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good.

        From then on every commit with this id, in flight or later, gets that same answer.
        """
        path = f"/v1/operations/{_req.segment(operation_id, 'operationId')}/abandon"
        answer = yield from self._json(IDEMPOTENT, "POST", path, _req.body(reason=reason))
        return CommitResult.from_answer(answer)

    # Intents

    def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> "Plan[Page]":
        query = _req.query(scope=scope, status=status, limit=limit, cursor=cursor)
        answer = yield from self._json(READ, "GET", f"/v1/intents{query}")
        return _page(answer)

    def get_intent(self, effect_key: str) -> "Plan[Optional[JsonObject]]":
        path = f"/v1/intents/{_req.segment(effect_key, 'effectKey')}"
        answer = yield from self._or_none("not_found", READ, "GET", path)
        return answer

    def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> "Plan[List[JsonObject]]":
        """Claims due intents. Never sent again after a lost reply: those claims lapse after
        ``ttl_ms`` and are claimed again."""
        body = _req.body(dispatcher=dispatcher, ttl_ms=ttl_ms, limit=limit)
        if targets is not None:
            body["targets"] = list(targets)
        answer = yield from self._json(WRITE, "POST", "/v1/intents/claim", body)
        return list(answer["items"])

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
    ) -> "Plan[JsonObject]":
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
        path = f"/v1/intents/{_req.segment(effect_key, 'effectKey')}/complete"
        answer = yield from self._json(IDEMPOTENT, "POST", path, body)
        return answer

    # Policies, cutovers, jobs

    def register_policy(
        self, version: str, digest: Optional[str] = None, description: Optional[str] = None
    ) -> "Plan[Tuple[JsonObject, bool]]":
        """Operator: ``(policy, created)``; created is False for the same version again."""
        body = _req.body(version=version, digest=digest, description=description)
        reply = yield from self._send(IDEMPOTENT, "POST", "/v1/policies", body)
        return reply.json(), reply.status == 201

    def list_policies(self) -> "Plan[List[JsonObject]]":
        answer = yield from self._json(READ, "GET", "/v1/policies")
        return list(answer["items"])

    def cutover(
        self,
        to_policy: str,
        holder: str,
        cutover_id: Optional[str] = None,
        scopes: Optional[Sequence[str]] = None,
        prefix: Optional[str] = None,
        lease_ttl_ms: Optional[int] = None,
        reason: Optional[str] = None,
    ) -> "Plan[JsonObject]":
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
        answer = yield from self._json(IDEMPOTENT, "POST", "/v1/cutovers", body)
        return answer

    def list_cutovers(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> "Plan[Page]":
        """Operator: cutovers, newest first."""
        answer = yield from self._json(READ, "GET", f"/v1/cutovers{_req.query(limit=limit, cursor=cursor)}")
        return _page(answer)

    def cutover_report(self, cutover_id: str) -> "Plan[Optional[JsonObject]]":
        path = f"/v1/cutovers/{_req.segment(cutover_id, 'cutoverId')}/report"
        answer = yield from self._or_none("not_found", READ, "GET", path)
        return answer

    def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> "Plan[None]":
        """Reports queue job events. Resent after a lost reply only when every event has ``at``."""
        wire = [{camel(key): value for key, value in event.items()} for event in events]
        kind = IDEMPOTENT if all("at" in event for event in wire) else WRITE
        yield from self._send(kind, "POST", "/v1/jobs/events", {"events": wire})

    # Audit and verification

    def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> "Plan[JsonObject]":
        """Operator: ``{"items": [entry], "nextAfterSeq": n or None}``."""
        query = _req.query(scope=scope, kind=kind, outcome=outcome, after_seq=after_seq, limit=limit)
        answer = yield from self._json(READ, "GET", f"/v1/audit{query}")
        return answer

    def verify(self) -> "Plan[VerifyReport]":
        """Operator: replays the tenant's audit log and reports every violation."""
        answer = yield from self._json(READ, "GET", "/v1/verify")
        return from_wire(VerifyReport, answer)

    # Tokens (the admin token)

    def create_token(
        self,
        tenant: str,
        role: str,
        label: Optional[str] = None,
        may_take_over: Optional[Sequence[str]] = None,
    ) -> "Plan[JsonObject]":
        """Admin: ``{"id", "token", "tenant", "role"}``; the token is shown only here.

        ``may_take_over`` (scope name prefixes) gives a worker token the take-over right: it may
        take over a scope whose name starts with one of them."""
        body = _req.body(tenant=tenant, role=role, label=label)
        if may_take_over is not None:
            body["mayTakeOver"] = list(may_take_over)
        answer = yield from self._json(WRITE, "POST", "/v1/admin/tokens", body)
        return answer

    def list_tokens(self, tenant: Optional[str] = None) -> "Plan[List[JsonObject]]":
        """Admin: the tokens (never a token or its hash)."""
        answer = yield from self._json(READ, "GET", f"/v1/admin/tokens{_req.query(tenant=tenant)}")
        return list(answer["items"])

    def revoke_token(self, token_id: str) -> "Plan[JsonObject]":
        answer = yield from self._json(IDEMPOTENT, "DELETE", f"/v1/admin/tokens/{_req.segment(token_id, 'id')}")
        return answer

    # Operations

    def healthz(self) -> "Plan[JsonObject]":
        answer = yield from self._json(READ, "GET", "/healthz")
        return answer

    def readyz(self) -> "Plan[bool]":
        """True when the server reaches its store."""
        try:
            yield from self._send(READ, "GET", "/readyz", retry=False)
        except FencegateError:
            return False
        return True

    def metrics(self) -> "Plan[str]":
        reply = yield from self._send(READ, "GET", "/metrics", json=False)
        return reply.text

    def openapi(self) -> "Plan[JsonObject]":
        answer = yield from self._json(READ, "GET", "/openapi.json")
        return answer

    # The one way requests are sent

    def _json(self, kind: str, method: str, path: str, body: Any = None) -> "Plan[Any]":
        reply = yield from self._send(kind, method, path, body)
        return reply.json()

    def _or_none(self, code: str, kind: str, method: str, path: str) -> "Plan[Optional[Any]]":
        try:
            return (yield from self._json(kind, method, path))
        except FencegateError as error:
            if error.code == code:
                return None
            raise

    def _send(
        self,
        kind: str,
        method: str,
        path: str,
        body: Any = None,
        retry: bool = True,
        json: bool = True,
    ) -> "Plan[Reply]":
        """One request with the retries its kind allows; the success reply, a JSON object unless
        ``json`` is False."""
        last: FencegateError = StoreUnavailableError(f"could not reach {self.base_url}")
        # An earlier attempt may have taken effect: its reply was lost, or said only "unknown".
        uncertain = False
        for attempt in range(self.retries + 1 if retry else 1):
            yield from backoff(attempt)
            try:
                reply = yield Exchange(method, path, body, resendable=kind != WRITE)
            except TransportError as error:
                if error.failure == LOST and kind == WRITE:
                    raise OutcomeUnknownError(
                        f"the connection was lost after {method} {path} was sent ({error}); "
                        "read the state to learn whether it took effect",
                        {"method": method, "path": path},
                    ) from None
                uncertain = uncertain or error.failure == LOST
                last = self._unreachable(error)
                continue
            assert reply is not None
            untrusted = unusable(reply, json)
            if untrusted is not None:
                raise self._untrusted(kind, method, path, reply, untrusted)
            if 200 <= reply.status < 300:
                return reply
            unchanged = nothing_changed(reply)
            failure = (
                OutcomeUnknownError(
                    f"{method} {path} {describe(reply)}; read the state to learn whether it "
                    "took effect",
                    {"method": method, "path": path, "status": reply.status},
                )
                if kind != READ and leaves_outcome_unknown(reply)
                else error_from(reply)
            )
            if not (unchanged or (kind != WRITE and worth_resending(reply))):
                if uncertain and failure.code == "stale_claim":
                    # The lost attempt may be the one that recorded the outcome.
                    failure.details["afterLostReply"] = True
                raise failure
            uncertain = uncertain or not unchanged
            last = failure
        raise last

    def _untrusted(
        self, kind: str, method: str, path: str, reply: Reply, why: str
    ) -> FencegateError:
        """An answer that says nothing the client can use: on a read an internal error, on a
        write an unknown outcome (the server may have taken it)."""
        details = {"method": method, "path": path, "status": reply.status}
        if kind == READ:
            return InternalError(f"{method} {path} {why}", details)
        return OutcomeUnknownError(
            f"{method} {path} {why}; read the state to learn whether it took effect", details
        )

    def _unreachable(self, error: TransportError) -> FencegateError:
        return StoreUnavailableError(f"could not reach fencegate at {self.base_url}: {error}")

    def _unless_unreachable(self, plan: "Plan[T]") -> "Plan[Optional[T]]":
        """What ``plan`` answers, or None when the server or its store cannot answer it now."""
        try:
            return (yield from plan)
        except FencegateError as error:
            if error.code in _CANNOT_ANSWER_NOW:
                return None
            raise

    def _unknown(self, operation_id: str, reason: str, settle: bool) -> "Plan[CommitResult]":
        """A commit still unknown after its retries: settled by abandon, never guessed."""
        if settle:
            try:
                return (yield from ApiPlans.abandon_operation(self, operation_id))
            except FencegateError as error:
                raise OutcomeUnknownError(
                    f"the outcome of commit {operation_id} is unknown ({reason}) and settling it "
                    f"failed ({error}); call abandon_operation({operation_id!r}) again",
                    {"operationId": operation_id},
                ) from error
        raise OutcomeUnknownError(
            f"the outcome of commit {operation_id} is unknown ({reason}); send the same commit "
            f"again or settle it with abandon_operation({operation_id!r})",
            {"operationId": operation_id},
        )


def _scope_path(scope: str) -> str:
    return f"/v1/scopes/{_req.segment(scope, 'scope')}"


def _page(answer: JsonObject, item: Optional[type] = None) -> Page:
    """A list answer as a Page; its items read as ``item`` when given, else left as they came."""
    items = answer["items"]
    return Page(
        items=[from_wire(item, each) for each in items] if item is not None else list(items),
        next_cursor=answer.get("nextCursor"),
    )


def install_calls(client_class: type, run: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Gives ``client_class`` one method per API call, made by ``run`` from the call's plan."""
    for name in ApiPlans.ROUTES:
        plan = getattr(ApiPlans, name)
        call = functools.wraps(plan)(run(plan))
        # Callers see what the call answers ("Grant"), not the plan that makes it ("Plan[Grant]").
        answers = str(plan.__annotations__.get("return", "Plan[Any]"))[len("Plan[") : -1]
        call.__annotations__ = {**plan.__annotations__, "return": answers}
        call.__signature__ = inspect.signature(plan).replace(return_annotation=answers)
        del call.__wrapped__
        setattr(client_class, name, call)
