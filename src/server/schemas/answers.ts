/** Answer bodies of the HTTP API (HTTP-API.md), one schema per shape. */
import { Type, type TSchema } from '@sinclair/typebox';
import { VIOLATION_KINDS, type ViolationKind } from '../../audit/violations.js';
import { COMMIT_REJECTION_CODES } from '../../errors.js';
import { GateSeriesSchema, rolloutHoldAnswer } from './rollout-gates.js';
import { AUDIT_KINDS, INTENT_STATUSES, JOB_STATES, ROLLOUT_STATUSES } from '../../types.js';
import {
  CLOSED,
  Counter,
  Millis,
  Name,
  Nullable,
  TakeOverPrefixes,
  Target,
  Tenant,
} from './common.js';

export const IntentStatusSchema = Type.Union(INTENT_STATUSES.map((status) => Type.Literal(status)));
export const AuditKindSchema = Type.Union(AUDIT_KINDS.map((kind) => Type.Literal(kind)));
export const AuditOutcomeSchema = Type.Union([
  Type.Literal('granted'),
  Type.Literal('ok'),
  Type.Literal('committed'),
  Type.Literal('rejected'),
  IntentStatusSchema,
]);

export const GrantSchema = Type.Object(
  {
    scope: Name,
    fence: Counter,
    holder: Name,
    leaseExpiresAt: Nullable(Millis),
    policyVersion: Nullable(Name),
    reacquired: Type.Boolean(),
  },
  CLOSED,
);

export const ScopeSchema = Type.Object(
  {
    scope: Name,
    fence: Counter,
    holder: Nullable(Name),
    leaseExpiresAt: Nullable(Millis),
    policyVersion: Nullable(Name),
    status: Type.Union([Type.Literal('active'), Type.Literal('deleted')]),
    updatedAt: Millis,
  },
  CLOSED,
);

export const RecordSchema = Type.Object(
  {
    scope: Name,
    name: Name,
    exists: Type.Boolean(),
    value: Type.Unknown({ description: 'the JSON value; null when the record does not exist' }),
    revision: Counter,
    incarnation: Counter,
    fingerprint: Nullable(Type.String()),
    updatedAt: Nullable(Millis),
  },
  CLOSED,
);

export const ReleaseResultSchema = Type.Object(
  { released: Type.Literal(true), alreadyReleased: Type.Boolean() },
  CLOSED,
);

export const CancelIntentsResultSchema = Type.Object(
  { cancelled: Type.Array(Type.String()), nextCursor: Nullable(Type.String()) },
  CLOSED,
);

export const CancelResultSchema = Type.Object(
  { fence: Counter, cancelledIntents: Counter },
  CLOSED,
);

export const DeleteScopeResultSchema = Type.Object({ fence: Counter }, CLOSED);

export const CommitCommittedSchema = Type.Object(
  {
    outcome: Type.Literal('committed'),
    operationId: Name,
    scope: Name,
    fence: Counter,
    records: Type.Array(
      Type.Object(
        {
          name: Name,
          revision: Counter,
          incarnation: Counter,
          fingerprint: Nullable(Type.String()),
        },
        CLOSED,
      ),
    ),
    intents: Type.Array(Type.Object({ effectKey: Name, status: IntentStatusSchema }, CLOSED)),
    replayed: Type.Boolean(),
  },
  CLOSED,
);

export const CommitRejectedSchema = Type.Object(
  {
    outcome: Type.Literal('rejected'),
    operationId: Name,
    replayed: Type.Boolean(),
    error: Type.Object(
      {
        code: Type.Union(COMMIT_REJECTION_CODES.map((code) => Type.Literal(code))),
        message: Type.String(),
        details: Type.Record(Type.String(), Type.Unknown()),
      },
      CLOSED,
    ),
  },
  CLOSED,
);

export const CommitResultSchema = Type.Union([CommitCommittedSchema, CommitRejectedSchema]);

export const IntentSchema = Type.Object(
  {
    effectKey: Name,
    scope: Name,
    target: Target,
    payload: Type.Unknown(),
    status: IntentStatusSchema,
    attempts: Counter,
    fence: Counter,
    operationId: Name,
    claimFence: Counter,
    providerRef: Nullable(Type.String()),
    lastError: Nullable(Type.String()),
    createdAt: Millis,
    updatedAt: Millis,
    unknownOutcomes: Counter,
    claimedBy: Nullable(Name),
    claimExpiresAt: Nullable(Millis),
    nextAttemptAt: Nullable(Millis),
  },
  CLOSED,
);

export function PageSchema<T extends TSchema>(item: T) {
  return Type.Object({ items: Type.Array(item), nextCursor: Nullable(Type.String()) }, CLOSED);
}

export const ScopePageSchema = PageSchema(ScopeSchema);
export const IntentPageSchema = PageSchema(IntentSchema);
/** The intents a claim took, each with its new claimFence. */
export const IntentListSchema = Type.Object({ items: Type.Array(IntentSchema) }, CLOSED);
/** Without a query, every record and no `nextCursor`; a page has one (null on the last page). */
export const RecordListSchema = Type.Object(
  { items: Type.Array(RecordSchema), nextCursor: Type.Optional(Nullable(Type.String())) },
  CLOSED,
);

export const AuditRecordChangeSchema = Type.Object(
  {
    name: Name,
    expected: Counter,
    actual: Counter,
    resulting: Nullable(Counter),
    fingerprint: Nullable(Type.String()),
    deleted: Type.Boolean(),
  },
  CLOSED,
);

export const AuditEntrySchema = Type.Object(
  {
    seq: Counter,
    at: Millis,
    tenant: Tenant,
    scope: Nullable(Name),
    kind: AuditKindSchema,
    outcome: AuditOutcomeSchema,
    reason: Nullable(Type.String()),
    taskId: Nullable(Name),
    operationId: Nullable(Name),
    holder: Nullable(Name),
    policyVersion: Nullable(Name),
    fence: Nullable(Counter),
    currentFence: Nullable(Counter),
    leaseExpiresAt: Nullable(Millis),
    records: Nullable(Type.Array(AuditRecordChangeSchema)),
    effectKey: Nullable(Name),
    reads: Nullable(
      Type.Array(
        Type.Object({ scope: Name, name: Name, expected: Counter, actual: Counter }, CLOSED),
        { description: "a commit's dependency reads: the revision read and the one checked" },
      ),
    ),
    tokenId: Type.Optional(
      Type.String({
        description:
          'the id of the token whose request wrote the entry; absent for a request made in process and in entries written before entries named their token',
      }),
    ),
  },
  CLOSED,
);

export const AuditPageSchema = Type.Object(
  { items: Type.Array(AuditEntrySchema), nextAfterSeq: Nullable(Counter) },
  CLOSED,
);

export const TokenCreatedSchema = Type.Object(
  {
    id: Name,
    token: Type.String({ description: 'shown once; only its sha256 is stored' }),
    tenant: Tenant,
    role: Type.Union([Type.Literal('worker'), Type.Literal('operator')]),
    mayTakeOver: Type.Optional(TakeOverPrefixes),
  },
  CLOSED,
);

export const TokenDeletedSchema = Type.Object({ deleted: Type.Literal(true) }, CLOSED);

export const TokenListSchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          id: Name,
          tenant: Type.String({ description: 'the tenant, or _admin for an admin token' }),
          role: Type.Union([
            Type.Literal('worker'),
            Type.Literal('operator'),
            Type.Literal('admin'),
          ]),
          label: Nullable(Type.String()),
          mayTakeOver: Type.Optional(TakeOverPrefixes),
          createdAt: Millis,
        },
        CLOSED,
      ),
    ),
  },
  CLOSED,
);

export const HealthSchema = Type.Object({ ok: Type.Literal(true) }, CLOSED);

export const ClockSchema = Type.Object({ now: Millis }, CLOSED);

export const PolicySchema = Type.Object(
  {
    version: Name,
    digest: Nullable(Type.String()),
    description: Nullable(Type.String()),
    registeredBy: Nullable(Type.String({ description: 'the id of the token that registered it' })),
    registeredAt: Millis,
  },
  CLOSED,
);

export const PolicyListSchema = Type.Object({ items: Type.Array(PolicySchema) }, CLOSED);

const ScopeFence = Type.Object({ scope: Name, fence: Counter }, CLOSED);

export const CutoverResultSchema = Type.Object(
  {
    cutoverId: Name,
    toPolicy: Name,
    scopes: Counter,
    fences: Type.Array(ScopeFence, { description: 'the fence each moved scope got' }),
    skipped: Type.Array(Name, {
      description: 'scopes found deleted: not moved (only a takeover re-creates a scope)',
    }),
  },
  CLOSED,
);

export const CutoverSummarySchema = Type.Object(
  {
    cutoverId: Name,
    toPolicy: Name,
    holder: Name,
    scopes: Type.Integer({ minimum: 0, description: 'how many scopes the cutover covers' }),
    moved: Type.Integer({ minimum: 0, description: 'how many of them it has moved' }),
    startedAt: Millis,
    finishedAt: Nullable(Millis),
  },
  CLOSED,
);

export const CutoverPageSchema = PageSchema(CutoverSummarySchema);

export const JobStateSchema = Type.Union(JOB_STATES.map((state) => Type.Literal(state)));

export const CutoverReportSchema = Type.Object(
  {
    cutoverId: Name,
    toPolicy: Name,
    holder: Name,
    status: Type.Union([Type.Literal('running'), Type.Literal('completed')]),
    scopes: Counter,
    startedAt: Millis,
    completedAt: Nullable(Millis),
    oldJobs: Type.Object(
      {
        total: Counter,
        byState: Type.Object(
          Object.fromEntries(JOB_STATES.map((state) => [state, Counter])) as Record<
            (typeof JOB_STATES)[number],
            typeof Counter
          >,
          CLOSED,
        ),
      },
      CLOSED,
    ),
    staleAttempts: Counter,
    staleAccepted: Type.Integer({
      minimum: 0,
      description: 'stale attempts that were accepted after the cutover: must be 0',
    }),
    staleRejectedByReason: Type.Record(Type.String(), Counter),
    liveCommits: Counter,
    skipped: Type.Array(Name, { description: 'scopes the cutover found deleted and did not move' }),
  },
  CLOSED,
);

const JobsByStateSchema = Type.Object(
  {
    total: Counter,
    byState: Type.Object(
      Object.fromEntries(JOB_STATES.map((state) => [state, Counter])) as Record<
        (typeof JOB_STATES)[number],
        typeof Counter
      >,
      CLOSED,
    ),
  },
  CLOSED,
);

const CutoverStatusSchema = Type.Union([Type.Literal('running'), Type.Literal('completed')]);

export const RolloutSchema = Type.Object(
  {
    rolloutId: Name,
    fromPolicy: Name,
    toPolicy: Name,
    selection: Type.Union([
      Type.Object({ prefix: Name }, CLOSED),
      Type.Object({ scopes: Type.Array(Name) }, CLOSED),
    ]),
    steps: Type.Array(Type.Integer({ minimum: 1, maximum: 100 })),
    controller: Nullable(Name),
    status: Type.Union(ROLLOUT_STATUSES.map((status) => Type.Literal(status))),
    step: Counter,
    percent: Type.Integer({ minimum: 0, maximum: 100 }),
    revision: Counter,
    cancelIntents: Type.Boolean(),
    reason: Nullable(Type.String()),
    startedAt: Millis,
    updatedAt: Millis,
    ...rolloutHoldAnswer,
    cutoverId: Nullable(Name),
    cutoverDone: Type.Boolean(),
  },
  CLOSED,
);

export const RolloutListSchema = Type.Object({ items: Type.Array(RolloutSchema) }, CLOSED);

export const RolloutReportSchema = Type.Object(
  {
    rollout: RolloutSchema,
    steps: Type.Array(
      Type.Object(
        {
          cutoverId: Name,
          percent: Type.Integer({ minimum: 0, maximum: 100 }),
          status: CutoverStatusSchema,
          moved: Counter,
          skipped: Counter,
          commitsAccepted: Counter,
          pinnedAtAcquire: Counter,
          unknownOutcomes: Counter,
          toPolicyJobs: JobsByStateSchema,
          startedAt: Millis,
          completedAt: Nullable(Millis),
        },
        CLOSED,
      ),
    ),
    pinnedAtAcquire: Counter,
    rollback: Nullable(
      Type.Object(
        {
          cutoverId: Name,
          status: CutoverStatusSchema,
          moved: Counter,
          skipped: Type.Array(Name),
          staleAttempts: Counter,
          staleAccepted: Type.Integer({
            minimum: 0,
            description: 'stale attempts accepted after the rollback: must be 0',
          }),
          intentsCancelled: Counter,
          startedAt: Millis,
          completedAt: Nullable(Millis),
        },
        CLOSED,
      ),
    ),
    unknownOutcomes: Counter,
    toPolicyJobs: JobsByStateSchema,
    gateSeries: Type.Array(GateSeriesSchema),
  },
  CLOSED,
);

export const JobEventsAcceptedSchema = Type.Object({ accepted: Counter }, CLOSED);

const ViolationKindSchema = Type.Union(
  (Object.keys(VIOLATION_KINDS) as ViolationKind[]).map((kind) => Type.Literal(kind)),
);
const Evidence = Type.Union([Type.Number(), Type.String(), Type.Null()]);

export const ViolationSchema = Type.Object(
  {
    seq: Counter,
    tenant: Type.String(),
    scope: Nullable(Type.String()),
    kind: ViolationKindSchema,
    expected: Evidence,
    found: Evidence,
    message: Type.String(),
    record: Type.Optional(Type.String()),
    effectKey: Type.Optional(Type.String()),
  },
  CLOSED,
);

export const VerifyReportSchema = Type.Object(
  {
    ok: Type.Boolean({ description: 'true when the history has no violation' }),
    checked: Counter,
    violations: Type.Array(ViolationSchema),
  },
  CLOSED,
);

/** Named in the OpenAPI document's components, and referenced wherever they appear. */
export const NAMED_ANSWER_SCHEMAS: Record<string, TSchema> = {
  Grant: GrantSchema,
  Scope: ScopeSchema,
  Record: RecordSchema,
  CommitCommitted: CommitCommittedSchema,
  CommitRejected: CommitRejectedSchema,
  Intent: IntentSchema,
  AuditEntry: AuditEntrySchema,
  Policy: PolicySchema,
  CutoverResult: CutoverResultSchema,
  CutoverReport: CutoverReportSchema,
  CutoverSummary: CutoverSummarySchema,
  Rollout: RolloutSchema,
  RolloutReport: RolloutReportSchema,
  Violation: ViolationSchema,
};
