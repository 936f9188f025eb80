"""What the server answers, as typed values with snake_case fields (the wire is camelCase).
Operator answers (cutovers, rollouts) stay dicts with the wire's keys; a rollout and its report are
typed as ``TypedDict``s of those keys.

Request parts (reads, writes, intents) are small dataclasses too; plain dicts with the same keys,
in snake_case or camelCase, are accepted wherever they are.
"""

import functools
import re
from dataclasses import dataclass, field, fields
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Type, TypedDict, TypeVar, Union

JsonObject = Dict[str, Any]

T = TypeVar("T")

_CAMEL = re.compile(r"([A-Z])")


@functools.lru_cache(maxsize=1024)
def snake(name: str) -> str:
    """``leaseExpiresAt`` -> ``lease_expires_at``; a few dozen wire names, converted once each."""
    return _CAMEL.sub(lambda m: "_" + m.group(1).lower(), name)


def camel(name: str) -> str:
    """``lease_expires_at`` -> ``leaseExpiresAt``."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def from_wire(cls: Type[T], answer: Mapping[str, Any]) -> T:
    """Builds ``cls`` from a wire object; fields a newer server adds are ignored."""
    kind: type = cls
    known = _field_names(kind)
    values = {}
    for key, value in answer.items():
        name = snake(key)
        if name in known:
            values[name] = value
    return cls(**values)


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> FrozenSet[str]:
    return frozenset(f.name for f in fields(cls))


@dataclass(frozen=True)
class Grant:
    scope: str
    fence: int
    holder: str
    lease_expires_at: Optional[int]
    policy_version: Optional[str]
    reacquired: bool = False


@dataclass(frozen=True)
class ScopeState:
    scope: str
    fence: int
    holder: Optional[str]
    lease_expires_at: Optional[int]
    policy_version: Optional[str]
    status: str
    updated_at: int


@dataclass(frozen=True)
class RecordState:
    scope: str
    name: str
    exists: bool
    value: Any
    revision: int
    incarnation: int
    fingerprint: Optional[str]
    updated_at: Optional[int]


@dataclass(frozen=True)
class ReleaseResult:
    released: bool
    already_released: bool


@dataclass(frozen=True)
class CancelResult:
    fence: int
    cancelled_intents: int


@dataclass(frozen=True)
class CommitError:
    """Why a commit was rejected: ``code`` is a rejection code of the catalog."""

    code: str
    message: str
    details: JsonObject = field(default_factory=dict)


@dataclass(frozen=True)
class CommittedRecord:
    name: str
    revision: int
    incarnation: int
    fingerprint: Optional[str]


@dataclass(frozen=True)
class CommitResult:
    """The answer to a commit: ``outcome`` is ``committed`` or ``rejected`` (then ``error``)."""

    outcome: str
    operation_id: str
    replayed: bool
    scope: Optional[str] = None
    fence: Optional[int] = None
    records: List[CommittedRecord] = field(default_factory=list)
    intents: List[JsonObject] = field(default_factory=list)
    error: Optional[CommitError] = None

    @property
    def committed(self) -> bool:
        return self.outcome == "committed"

    @staticmethod
    def from_answer(answer: Mapping[str, Any]) -> "CommitResult":
        error = answer.get("error")
        return CommitResult(
            outcome=answer["outcome"],
            operation_id=answer["operationId"],
            replayed=bool(answer.get("replayed", False)),
            scope=answer.get("scope"),
            fence=answer.get("fence"),
            records=[from_wire(CommittedRecord, r) for r in answer.get("records") or []],
            intents=list(answer.get("intents") or []),
            error=None
            if error is None
            else CommitError(
                code=error["code"],
                message=error.get("message", error["code"]),
                details=dict(error.get("details") or {}),
            ),
        )


@dataclass(frozen=True)
class VerifyReport:
    ok: bool
    checked: int
    violations: List[JsonObject]


@dataclass(frozen=True)
class Page:
    """One page of a list; ``next_cursor`` is None on the last page."""

    items: List[Any]
    next_cursor: Optional[str]


@dataclass(frozen=True)
class RecordReads:
    """What ``read_records`` answers: the records and the pages, each in the order asked."""

    records: List[RecordState]
    pages: List[Page]


class Rollout(TypedDict):
    """A progressive rollout as the server answers it (docs/rollout.md), keys as on the wire.

    ``status`` is ``running``, ``paused``, ``rolling_back``, ``rolled_back`` or ``completed``;
    ``selection`` is ``{"prefix": ...}`` or ``{"scopes": [...]}``; ``revision`` grows by one with
    every change, and a command that names it applies only at that revision."""

    rolloutId: str
    fromPolicy: str
    toPolicy: str
    selection: JsonObject
    steps: List[int]
    controller: Optional[str]
    status: str
    step: int
    percent: int
    revision: int
    cancelIntents: bool
    reason: Optional[str]
    startedAt: int
    updatedAt: int
    holdSeconds: Optional[List[int]]
    holdExtensionSeconds: Optional[int]
    gates: List["RolloutGate"]
    onFailure: str
    gateResults: List["RolloutGateResult"]
    cutoverId: Optional[str]
    cutoverDone: bool


class RolloutGate(TypedDict, total=False):
    """A gate of a rollout, keys as on the wire (docs/rollout.md, "Holds and gates"): ``name``,
    ``metric`` and ``minSamples``, and one limit of ``max``, ``maxRatio`` or ``confidence``
    (none for ``verify_violations``); ``code`` for ``rejection_ratio``, ``source`` (a name the
    server's configuration gives) for ``external``."""

    name: str
    metric: str
    code: str
    source: str
    minSamples: int
    max: float
    maxRatio: float
    confidence: float


class RolloutGateReading(TypedDict):
    """One of a gate's readings at a driver's look."""

    verdict: str
    value: Optional[float]
    baseline: Optional[float]
    samples: int
    baselineSamples: int
    limit: Optional[float]
    pValue: Optional[float]
    at: int


class RolloutGateResult(RolloutGateReading):
    """A gate's reading at the driver's last look at the current step, with the gate's name."""

    name: str


class RolloutGateSeries(TypedDict):
    """A gate's readings of the current step, oldest first (at most 60, 240 over all gates)."""

    name: str
    readings: List[RolloutGateReading]


class JobTally(TypedDict):
    """Jobs of the jobs ledger by their last state (queued, reserved, running, succeeded,
    failed, retrying), and how many in all."""

    total: int
    byState: Dict[str, int]


class RolloutStepReport(TypedDict):
    """One step of a rollout: the scopes its cutover moved or left, the commits accepted on them,
    the scopes an acquire pinned during it, and on its scopes the intents whose outcome is unknown
    and the ``toPolicy`` jobs of the jobs ledger."""

    cutoverId: str
    percent: int
    status: str
    moved: int
    skipped: int
    commitsAccepted: int
    pinnedAtAcquire: int
    unknownOutcomes: int
    toPolicyJobs: JobTally
    startedAt: int
    completedAt: Optional[int]


class RolloutRollbackReport(TypedDict):
    """A rollout's rollback: ``staleAccepted`` counts commits accepted under a fence older than
    the rollback's, and must be 0."""

    cutoverId: str
    status: str
    moved: int
    skipped: List[str]
    staleAttempts: int
    staleAccepted: int
    intentsCancelled: int
    startedAt: int
    completedAt: Optional[int]


class RolloutReport(TypedDict):
    """What ``rollout_report`` answers; ``rollback`` is None until a rollback starts."""

    rollout: Rollout
    steps: List[RolloutStepReport]
    pinnedAtAcquire: int
    rollback: Optional[RolloutRollbackReport]
    unknownOutcomes: int
    toPolicyJobs: JobTally
    gateSeries: List[RolloutGateSeries]


@dataclass(frozen=True)
class Read:
    """A dependency of a commit: the record must still be at ``revision``."""

    name: str
    revision: int
    scope: Optional[str] = None


@dataclass(frozen=True)
class Write:
    """A record write: a new ``value``, or ``delete=True``, on the revision that was read."""

    name: str
    expect_revision: int
    value: Any = None
    delete: bool = False


@dataclass(frozen=True)
class Intent:
    """An external effect to dispatch once the commit is stored (the transactional outbox)."""

    effect_key: str
    target: str
    payload: Any


CommitPart = Union[Read, Write, Intent, Mapping[str, Any]]


def part_to_wire(part: CommitPart) -> JsonObject:
    """A read, write or intent as the wire wants it; values and payloads are left untouched."""
    if isinstance(part, Write):
        out: JsonObject = {"name": part.name, "expectRevision": part.expect_revision}
        if part.delete:
            out["delete"] = True
        else:
            out["value"] = part.value
        return out
    if isinstance(part, Read):
        read: JsonObject = {"name": part.name, "revision": part.revision}
        if part.scope is not None:
            read["scope"] = part.scope
        return read
    if isinstance(part, Intent):
        return {"effectKey": part.effect_key, "target": part.target, "payload": part.payload}
    return {camel(key): value for key, value in part.items()}
