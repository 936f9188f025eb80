"""fencegate.Client: the fencegate HTTP API, with the retry rules of the TypeScript FencegateClient.

Retries are limited to what cannot do harm: a request that never reached the server, or that the
server answered ``store_unavailable`` (nothing changed), is sent again; after a lost reply, reads
and the writes that are idempotent by construction (complete_intent, register_policy, a cutover
by its id, job events that carry ``at``, abandon_operation) are sent again; lease operations and
claims are not (they may have taken effect): that is ``OutcomeUnknownError``.

A commit carries an operationId. When its outcome is unknown (a lost reply, ``outcome_unknown``,
a server fault), the client settles it with ``abandon_operation``: the server answers the stored
outcome if the commit was stored, otherwise stores ``operation_abandoned`` so that commit can
never apply. Nothing else decides it; if abandon cannot be reached either, the answer is
``OutcomeUnknownError``.
"""

import random
import re
import time
import uuid
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar
from urllib.parse import quote, urlencode

from ._base import FencegateError
from ._http import LOST, NOT_SENT, Reply, TransportError, exchange
from .errors import ERROR_CLASSES, InternalError, InvalidRequestError
from .errors import OutcomeUnknownError, StoreUnavailableError
from .models import (
    CancelResult,
    CommitPart,
    CommitResult,
    Grant,
    JsonObject,
    Page,
    RecordState,
    ReleaseResult,
    ScopeState,
    VerifyReport,
    camel,
    from_wire,
    part_to_wire,
)

T = TypeVar("T")

#: How a request may be retried after its reply was lost.
READ = "read"  # sent again
IDEMPOTENT = "idempotent"  # a write that cannot apply twice: sent again
WRITE = "write"  # may have taken effect: never sent again after a lost reply

_NAME = re.compile(r"^[A-Za-z0-9._:/@-]{1,256}$")
_MAX_BACKOFF_S = 1.0


class Client:
    """A worker, operator or admin token of one tenant, talking to one fencegate server."""

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

    def __init__(self, base_url: str, token: str, timeout: float = 10.0, retries: int = 3) -> None:
        """``timeout`` is per attempt, in seconds; ``retries`` extra attempts where allowed."""
        self.base_url = base_url.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.retries = retries

    def __repr__(self) -> str:  # never the token
        return f"fencegate.Client({self.base_url!r})"

    # Leases and scopes

    def acquire(
        self,
        scope: str,
        holder: str,
        ttl_ms: int,
        policy_version: Optional[str] = None,
        job: Optional[Mapping[str, Any]] = None,
    ) -> Grant:
        """``job`` (``job_id``, ``attempt``, ``states``) records the job's states in the jobs ledger
        in the same transaction as the grant, under the fence granted."""
        body = _body(
            scope=scope,
            holder=holder,
            ttl_ms=ttl_ms,
            policy_version=policy_version,
            job=_job(job),
        )
        return from_wire(Grant, self._json(WRITE, "POST", "/v1/leases/acquire", body))

    def renew(self, scope: str, holder: str, fence: int, ttl_ms: int) -> Grant:
        body = _body(scope=scope, holder=holder, fence=fence, ttl_ms=ttl_ms)
        return from_wire(Grant, self._json(WRITE, "POST", "/v1/leases/renew", body))

    def release(
        self, scope: str, holder: str, fence: int, job: Optional[Mapping[str, Any]] = None
    ) -> ReleaseResult:
        """``job`` as for :meth:`acquire`, recorded with the release."""
        body = _body(scope=scope, holder=holder, fence=fence, job=_job(job))
        return from_wire(ReleaseResult, self._json(WRITE, "POST", "/v1/leases/release", body))

    def get_scope(self, scope: str) -> Optional[ScopeState]:
        answer = self._or_none("scope_not_found", READ, "GET", f"/v1/scopes/{_seg(scope, 'scope')}")
        return None if answer is None else from_wire(ScopeState, answer)

    def list_scopes(
        self,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        query = _query(prefix=prefix, limit=limit, cursor=cursor)
        answer = self._json(READ, "GET", f"/v1/scopes{query}")
        items = [from_wire(ScopeState, item) for item in answer["items"]]
        return Page(items=items, next_cursor=answer.get("nextCursor"))

    def takeover(
        self,
        scope: str,
        holder: str,
        ttl_ms: Optional[int] = None,
        policy_version: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> Grant:
        """Operator: a new grant (fence + 1) regardless of the live lease."""
        body = _body(holder=holder, ttl_ms=ttl_ms, policy_version=policy_version, reason=reason)
        path = f"/v1/scopes/{_seg(scope, 'scope')}/takeover"
        return from_wire(Grant, self._json(WRITE, "POST", path, body))

    def cancel(self, scope: str, reason: Optional[str] = None) -> CancelResult:
        """Operator: revokes authority (fence + 1, no holder); pending intents are cancelled."""
        path = f"/v1/scopes/{_seg(scope, 'scope')}/cancel"
        return from_wire(CancelResult, self._json(WRITE, "POST", path, _body(reason=reason)))

    def delete_scope(self, scope: str, reason: Optional[str] = None) -> JsonObject:
        """Operator: fence + 1, the scope deleted and its records tombstoned; ``{"fence": n}``."""
        body = _body(reason=reason) if reason is not None else None
        return self._json(WRITE, "DELETE", f"/v1/scopes/{_seg(scope, 'scope')}", body)

    # Records and commits

    def get_record(self, scope: str, name: str) -> RecordState:
        """The record; one that never existed reads ``exists=False, revision=0``."""
        path = f"/v1/scopes/{_seg(scope, 'scope')}/records/{_seg(name, 'name')}"
        return from_wire(RecordState, self._json(READ, "GET", path))

    def list_records(self, scope: str) -> List[RecordState]:
        answer = self._json(READ, "GET", f"/v1/scopes/{_seg(scope, 'scope')}/records")
        return [from_wire(RecordState, item) for item in answer["items"]]

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
        query = _query(
            prefix=prefix, order=order, direction=direction, after=after, limit=limit, cursor=cursor
        )
        answer = self._json(READ, "GET", f"/v1/scopes/{_seg(scope, 'scope')}/records{query}")
        items = [from_wire(RecordState, item) for item in answer["items"]]
        return Page(items=items, next_cursor=answer.get("nextCursor"))

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

        When the outcome is unknown it is settled with ``abandon_operation`` (the stored outcome,
        or ``operation_abandoned``); with ``settle_unknown=False`` it raises
        ``OutcomeUnknownError`` instead, and the caller may send the same commit again.
        """
        body = _body(
            scope=scope,
            fence=fence,
            operation_id=operation_id,
            task_id=task_id,
            policy_version=policy_version,
            release=True if release else None,
            job=_job(job),
        )
        body["reads"] = [part_to_wire(part) for part in reads]
        body["writes"] = [part_to_wire(part) for part in writes]
        body["intents"] = [part_to_wire(part) for part in intents]
        last: FencegateError = StoreUnavailableError(f"could not reach {self.base_url}")
        for attempt in range(self.retries + 1):
            _backoff(attempt)
            try:
                reply = self._exchange("POST", "/v1/commit", body)
            except TransportError as error:
                last = self._unreachable(error)
                if error.failure == NOT_SENT:
                    continue
                return self._unknown(operation_id, str(error), settle_unknown)
            answer = reply.json()
            if reply.status == 200 or (reply.status == 409 and _is_commit_answer(answer)):
                return CommitResult.from_answer(answer)
            error = _error_from(reply)
            if error.code == "store_unavailable":
                last = error
                continue
            if error.code != "outcome_unknown" and reply.status < 500:
                raise error
            return self._unknown(operation_id, error.message, settle_unknown)
        raise last

    def get_operation(self, operation_id: str) -> Optional[CommitResult]:
        """The stored outcome, exactly as first answered; None: no outcome *yet* (see abandon)."""
        path = f"/v1/operations/{_seg(operation_id, 'operationId')}"
        answer = self._or_none("not_found", READ, "GET", path)
        return None if answer is None else CommitResult.from_answer(answer)

    def abandon_operation(self, operation_id: str, reason: Optional[str] = None) -> CommitResult:
        """Settles an operation: its stored outcome, or ``operation_abandoned`` stored for good.

        From then on every commit with this id, in flight or later, gets that same answer.
        """
        path = f"/v1/operations/{_seg(operation_id, 'operationId')}/abandon"
        answer = self._json(IDEMPOTENT, "POST", path, _body(reason=reason))
        return CommitResult.from_answer(answer)

    # Intents

    def list_intents(
        self,
        scope: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page:
        query = _query(scope=scope, status=status, limit=limit, cursor=cursor)
        answer = self._json(READ, "GET", f"/v1/intents{query}")
        return Page(items=list(answer["items"]), next_cursor=answer.get("nextCursor"))

    def get_intent(self, effect_key: str) -> Optional[JsonObject]:
        path = f"/v1/intents/{_seg(effect_key, 'effectKey')}"
        return self._or_none("not_found", READ, "GET", path)

    def claim_intents(
        self,
        dispatcher: str,
        ttl_ms: int,
        limit: int,
        targets: Optional[Sequence[str]] = None,
    ) -> List[JsonObject]:
        """Claims due intents. Never sent again after a lost reply: those claims lapse after
        ``ttl_ms`` and are claimed again."""
        body = _body(dispatcher=dispatcher, ttl_ms=ttl_ms, limit=limit)
        if targets is not None:
            body["targets"] = list(targets)
        return list(self._json(WRITE, "POST", "/v1/intents/claim", body)["items"])

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
        body = _body(
            claim_fence=claim_fence,
            outcome=outcome,
            retryable=retryable,
            provider_ref=provider_ref,
            error=error,
            retry_after_ms=retry_after_ms,
            code=code,
        )
        path = f"/v1/intents/{_seg(effect_key, 'effectKey')}/complete"
        return self._json(IDEMPOTENT, "POST", path, body)

    # Policies, cutovers, jobs

    def register_policy(
        self, version: str, digest: Optional[str] = None, description: Optional[str] = None
    ) -> Tuple[JsonObject, bool]:
        """Operator: ``(policy, created)``; created is False for the same version again."""
        body = _body(version=version, digest=digest, description=description)
        reply = self._send(IDEMPOTENT, "POST", "/v1/policies", body)
        return reply.json(), reply.status == 201

    def list_policies(self) -> List[JsonObject]:
        return list(self._json(READ, "GET", "/v1/policies")["items"])

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
        body = _body(
            cutover_id=cutover_id or str(uuid.uuid4()),
            to_policy=to_policy,
            holder=holder,
            prefix=prefix,
            lease_ttl_ms=lease_ttl_ms,
            reason=reason,
        )
        if scopes is not None:
            body["scopes"] = list(scopes)
        return self._json(IDEMPOTENT, "POST", "/v1/cutovers", body)

    def list_cutovers(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """Operator: cutovers, newest first."""
        answer = self._json(READ, "GET", f"/v1/cutovers{_query(limit=limit, cursor=cursor)}")
        return Page(items=list(answer["items"]), next_cursor=answer.get("nextCursor"))

    def cutover_report(self, cutover_id: str) -> Optional[JsonObject]:
        path = f"/v1/cutovers/{_seg(cutover_id, 'cutoverId')}/report"
        return self._or_none("not_found", READ, "GET", path)

    def record_job_events(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Reports queue job events. Resent after a lost reply only when every event has ``at``."""
        wire = [{camel(key): value for key, value in event.items()} for event in events]
        kind = IDEMPOTENT if all("at" in event for event in wire) else WRITE
        self._send(kind, "POST", "/v1/jobs/events", {"events": wire})

    # Audit and verification

    def audit(
        self,
        scope: Optional[str] = None,
        kind: Optional[str] = None,
        outcome: Optional[str] = None,
        after_seq: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> JsonObject:
        """Operator: ``{"items": [entry], "nextAfterSeq": n or None}``."""
        query = _query(scope=scope, kind=kind, outcome=outcome, after_seq=after_seq, limit=limit)
        return self._json(READ, "GET", f"/v1/audit{query}")

    def verify(self) -> VerifyReport:
        """Operator: replays the tenant's audit log and reports every violation."""
        return from_wire(VerifyReport, self._json(READ, "GET", "/v1/verify"))

    # Tokens (the admin token)

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
        body = _body(tenant=tenant, role=role, label=label)
        if may_take_over is not None:
            body["mayTakeOver"] = list(may_take_over)
        return self._json(WRITE, "POST", "/v1/admin/tokens", body)

    def list_tokens(self, tenant: Optional[str] = None) -> List[JsonObject]:
        """Admin: the tokens (never a token or its hash)."""
        return list(self._json(READ, "GET", f"/v1/admin/tokens{_query(tenant=tenant)}")["items"])

    def revoke_token(self, token_id: str) -> JsonObject:
        return self._json(IDEMPOTENT, "DELETE", f"/v1/admin/tokens/{_seg(token_id, 'id')}")

    # Operations

    def healthz(self) -> JsonObject:
        return self._json(READ, "GET", "/healthz")

    def readyz(self) -> bool:
        """True when the server reaches its store."""
        try:
            self._send(READ, "GET", "/readyz", retry=False)
        except FencegateError:
            return False
        return True

    def metrics(self) -> str:
        return self._send(READ, "GET", "/metrics").text

    def openapi(self) -> JsonObject:
        return self._json(READ, "GET", "/openapi.json")

    # The one way requests are sent

    def _json(self, kind: str, method: str, path: str, body: Any = None) -> Any:
        return self._send(kind, method, path, body).json()

    def _or_none(self, code: str, kind: str, method: str, path: str) -> Optional[Any]:
        try:
            return self._json(kind, method, path)
        except FencegateError as error:
            if error.code == code:
                return None
            raise

    def _send(
        self, kind: str, method: str, path: str, body: Any = None, retry: bool = True
    ) -> Reply:
        """One request with the retries its kind allows; the success reply."""
        last: FencegateError = StoreUnavailableError(f"could not reach {self.base_url}")
        # An earlier attempt may have taken effect: its reply was lost, or said only "unknown".
        uncertain = False
        for attempt in range(self.retries + 1 if retry else 1):
            _backoff(attempt)
            try:
                reply = self._exchange(method, path, body)
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
            if 200 <= reply.status < 300:
                return reply
            failure = _error_from(reply)
            unchanged = failure.code == "store_unavailable"
            if not (unchanged or (kind != WRITE and reply.status in (502, 503, 504))):
                if uncertain and failure.code == "stale_claim":
                    # The lost attempt may be the one that recorded the outcome.
                    failure.details["afterLostReply"] = True
                raise failure
            uncertain = uncertain or not unchanged
            last = failure
        raise last

    def _exchange(self, method: str, path: str, body: Any) -> Reply:
        return exchange(self.base_url + path, method, self._token, body, self.timeout)

    def _unreachable(self, error: TransportError) -> FencegateError:
        return StoreUnavailableError(f"could not reach fencegate at {self.base_url}: {error}")

    def _unknown(self, operation_id: str, reason: str, settle: bool) -> CommitResult:
        """An unknown commit outcome: settled by abandon, never guessed."""
        if settle:
            try:
                return self.abandon_operation(operation_id)
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


def _error_from(reply: Reply) -> FencegateError:
    """The catalog error of an error answer; an answer that is not fencegate's says so."""
    answer = reply.json()
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        code: str = error["code"]
        cls: Type[FencegateError] = ERROR_CLASSES.get(code, FencegateError)
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        message = error.get("message") if isinstance(error.get("message"), str) else code
        return cls(message, details, code=code)
    return InternalError(
        f"the server answered HTTP {reply.status} without a fencegate error body",
        {"status": reply.status},
    )


def _is_commit_answer(answer: Any) -> bool:
    return isinstance(answer, dict) and answer.get("outcome") in ("committed", "rejected")


def _body(**fields: Any) -> Dict[str, Any]:
    """Keyword arguments as a wire body: camelCase keys, None left out."""
    return {camel(key): value for key, value in fields.items() if value is not None}


def _job(job: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    return None if job is None else {camel(key): value for key, value in job.items()}


def _query(**fields: Any) -> str:
    params = [(camel(key), str(value)) for key, value in fields.items() if value is not None]
    return "" if not params else "?" + urlencode(params)


def _seg(name: str, field: str) -> str:
    """A name as one URL path segment; a name that could address another route is refused."""
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise InvalidRequestError(
            f"{field} must be 1 to 256 characters of A-Z a-z 0-9 . _ : / @ - "
            f"(and not . or ..), got {name!r}",
            {"field": field},
        )
    return quote(name, safe="")


def _backoff(attempt: int) -> None:
    """Exponential backoff with jitter: about 50, 100, 200 ms ..., at most 1 s."""
    if attempt == 0:
        return
    ceiling = min(_MAX_BACKOFF_S, 0.025 * 2**attempt)
    time.sleep(ceiling / 2 + random.random() * ceiling / 2)
