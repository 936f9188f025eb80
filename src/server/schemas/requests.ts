/**
 * Request schemas (bodies, query strings, path parameters). Ranges that HTTP-API.md calls
 * configurable come from a Limits object, so the schemas are built per server by
 * `requestSchemas(limits)`; their static types do not depend on the limits.
 */
import { Type } from '@sinclair/typebox';
import { MAX_BATCH_COMMITS, NAME_PATTERN, NAME_RULE, type Limits } from '../../core/limits.js';
import { MAX_ROLLOUT_SCOPES } from '../../core/validate-rollout.js';
import { rolloutHoldBody } from './rollout-gates.js';
import { JOB_STATES, ROLLOUT_STATUSES } from '../../types.js';
import {
  AuditKindSchema,
  AuditOutcomeSchema,
  IntentStatusSchema,
  JobStateSchema,
} from './answers.js';
import {
  CLOSED,
  Counter,
  Cursor,
  MAX_COUNTER,
  MAX_LABEL_LENGTH,
  MAX_REASON_LENGTH,
  Name,
  Reason,
  TakeOverPrefixes,
  Target,
  Tenant,
} from './common.js';

/** The largest single step of the test clock: ten years. */
export const MAX_CLOCK_STEP_MS = 10 * 365 * 86_400_000;

/** The bounds below are those of core/validate-ops.ts, which explains a refusal. */
const MAX_CLAIM_TARGETS = 256;
const MAX_RETRY_AFTER_MS = 86_400_000;
const MAX_PROVIDER_REF_LENGTH = 256;
const MAX_DIGEST_LENGTH = 256;
const MAX_SCOPES_PER_CUTOVER = 100_000;
const MAX_JOB_EVENTS = 1000;
const MAX_JOB_ATTEMPT = 1_000_000;

export function requestSchemas(limits: Limits) {
  const ttl = Type.Integer({ minimum: limits.minTtlMs, maximum: limits.maxTtlMs });
  const listLimit = Type.Integer({ minimum: 1, maximum: limits.maxListLimit });

  const LeaseJob = Type.Object(
    {
      jobId: Name,
      attempt: Type.Integer({ minimum: 0, maximum: MAX_JOB_ATTEMPT }),
      states: Type.Array(JobStateSchema, { minItems: 1, maxItems: JOB_STATES.length }),
    },
    {
      ...CLOSED,
      description:
        "job states recorded in the jobs ledger with the operation, in its transaction, under its scope, fence and the scope's policy version; none when it is refused or the scope has no policy version",
    },
  );
  const AcquireBody = Type.Object(
    {
      scope: Name,
      holder: Name,
      ttlMs: ttl,
      policyVersion: Type.Optional(Name),
      policyVersions: Type.Optional(
        Type.Array(Name, {
          minItems: 1,
          maxItems: 8,
          description:
            'the versions this worker can run, instead of policyVersion; the grant says which applies',
        }),
      ),
      job: Type.Optional(LeaseJob),
    },
    CLOSED,
  );
  const RenewBody = Type.Object({ scope: Name, holder: Name, fence: Counter, ttlMs: ttl }, CLOSED);
  const ReleaseBody = Type.Object(
    { scope: Name, holder: Name, fence: Counter, job: Type.Optional(LeaseJob) },
    CLOSED,
  );
  const CancelIntentsBody = Type.Object(
    {
      scope: Name,
      holder: Name,
      fence: Counter,
      committedFrom: Counter,
      reason: Type.Optional(Reason()),
      cursor: Type.Optional(Cursor()),
    },
    CLOSED,
  );
  const TakeoverBody = Type.Object(
    {
      holder: Name,
      ttlMs: Type.Optional(ttl),
      policyVersion: Type.Optional(Name),
      reason: Type.Optional(Reason()),
    },
    CLOSED,
  );
  const ReasonBody = Type.Object({ reason: Type.Optional(Reason()) }, CLOSED);

  const ReadDependency = Type.Object(
    { scope: Type.Optional(Name), name: Name, revision: Counter },
    CLOSED,
  );
  const ValueWrite = Type.Object(
    { name: Name, expectRevision: Counter, value: Type.Unknown({ description: 'any JSON value' }) },
    CLOSED,
  );
  const DeleteWrite = Type.Object(
    { name: Name, expectRevision: Counter, delete: Type.Literal(true) },
    CLOSED,
  );
  const IntentRequest = Type.Object(
    { effectKey: Name, target: Target, payload: Type.Unknown({ description: 'any JSON value' }) },
    CLOSED,
  );
  const CommitBody = Type.Object(
    {
      scope: Name,
      fence: Counter,
      operationId: Name,
      taskId: Type.Optional(Name),
      policyVersion: Type.Optional(Name),
      reads: Type.Optional(Type.Array(ReadDependency, { maxItems: limits.maxReads })),
      writes: Type.Optional(
        Type.Array(Type.Union([ValueWrite, DeleteWrite]), { maxItems: limits.maxWrites }),
      ),
      intents: Type.Optional(Type.Array(IntentRequest, { maxItems: limits.maxIntents })),
      release: Type.Optional(
        Type.Literal(true, {
          description:
            "the run's last commit: committed, it also releases the lease, in its transaction",
        }),
      ),
      job: Type.Optional(LeaseJob),
    },
    CLOSED,
  );
  // Each item is checked on its own, as the body of POST /v1/commit, and refused on its own.
  const CommitsBody = Type.Object(
    {
      commits: Type.Array(
        Type.Unknown({ description: 'a commit, as the body of POST /v1/commit' }),
        { minItems: 1, maxItems: MAX_BATCH_COMMITS },
      ),
    },
    CLOSED,
  );

  const NamePrefix = Type.Optional(
    Type.String({
      pattern: `^$|${NAME_PATTERN.source}`,
      maxLength: 256,
      description: `empty, or ${NAME_RULE}`,
    }),
  );
  const ListScopesQuery = Type.Object(
    {
      prefix: NamePrefix,
      limit: Type.Optional(listLimit),
      cursor: Type.Optional(Cursor()),
    },
    CLOSED,
  );
  const ListIntentsQuery = Type.Object(
    {
      scope: Type.Optional(Name),
      status: Type.Optional(IntentStatusSchema),
      limit: Type.Optional(listLimit),
      cursor: Type.Optional(Cursor()),
    },
    CLOSED,
  );
  const ListRecordsQuery = Type.Object(
    {
      prefix: NamePrefix,
      order: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('revision')])),
      direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
      after: Type.Optional(Name),
      limit: Type.Optional(listLimit),
      cursor: Type.Optional(Cursor()),
    },
    CLOSED,
  );
  const ListCutoversQuery = Type.Object(
    { limit: Type.Optional(listLimit), cursor: Type.Optional(Cursor()) },
    CLOSED,
  );
  const AuditQuery = Type.Object(
    {
      scope: Type.Optional(Name),
      kind: Type.Optional(AuditKindSchema),
      outcome: Type.Optional(AuditOutcomeSchema),
      afterSeq: Type.Optional(Counter),
      limit: Type.Optional(listLimit),
    },
    CLOSED,
  );

  const CreateTokenBody = Type.Object(
    {
      tenant: Tenant,
      role: Type.Union([Type.Literal('worker'), Type.Literal('operator')]),
      label: Type.Optional(Type.String({ maxLength: MAX_LABEL_LENGTH })),
      mayTakeOver: Type.Optional(TakeOverPrefixes),
    },
    CLOSED,
  );
  const ClaimBody = Type.Object(
    {
      dispatcher: Name,
      ttlMs: ttl,
      limit: listLimit,
      targets: Type.Optional(Type.Array(Target, { minItems: 1, maxItems: MAX_CLAIM_TARGETS })),
    },
    CLOSED,
  );
  const CompleteBody = Type.Object(
    {
      claimFence: Counter,
      outcome: Type.Union([
        Type.Literal('delivered'),
        Type.Literal('failed'),
        Type.Literal('unknown'),
        Type.Literal('needs_attention'),
      ]),
      retryable: Type.Optional(Type.Boolean()),
      retryAfterMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_RETRY_AFTER_MS })),
      providerRef: Type.Optional(Type.String({ maxLength: MAX_PROVIDER_REF_LENGTH })),
      error: Type.Optional(Type.String({ maxLength: MAX_REASON_LENGTH })),
      code: Type.Optional(Type.Literal('target_not_allowed')),
    },
    CLOSED,
  );
  const PolicyBody = Type.Object(
    {
      version: Name,
      digest: Type.Optional(Type.String({ maxLength: MAX_DIGEST_LENGTH })),
      description: Type.Optional(Type.String({ maxLength: MAX_REASON_LENGTH })),
    },
    CLOSED,
  );
  const CutoverBody = Type.Object(
    {
      cutoverId: Type.Optional(Name),
      toPolicy: Name,
      holder: Name,
      scopes: Type.Optional(
        Type.Array(Name, {
          minItems: 1,
          maxItems: MAX_SCOPES_PER_CUTOVER,
          description: 'send exactly one of scopes or prefix',
        }),
      ),
      prefix: Type.Optional(Name),
      leaseTtlMs: Type.Optional(ttl),
      reason: Type.Optional(Reason()),
    },
    CLOSED,
  );
  const JobEvent = Type.Object(
    {
      jobId: Name,
      scope: Name,
      policyVersion: Name,
      fence: Counter,
      state: JobStateSchema,
      attempt: Type.Integer({ minimum: 0, maximum: MAX_JOB_ATTEMPT }),
      at: Type.Optional(
        Type.Integer({ minimum: 0, maximum: MAX_COUNTER, description: 'store time when absent' }),
      ),
    },
    CLOSED,
  );
  const JobEventsBody = Type.Object(
    { events: Type.Array(JobEvent, { minItems: 1, maxItems: MAX_JOB_EVENTS }) },
    CLOSED,
  );

  const RolloutBody = Type.Object(
    {
      rolloutId: Type.Optional(Name),
      fromPolicy: Name,
      toPolicy: Name,
      scopes: Type.Optional(
        Type.Array(Name, {
          minItems: 1,
          maxItems: MAX_ROLLOUT_SCOPES,
          description: 'send exactly one of scopes or prefix',
        }),
      ),
      prefix: Type.Optional(Name),
      steps: Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), {
        minItems: 1,
        maxItems: 20,
        description: 'increasing percentages of the selection, e.g. [5, 25, 50, 100]',
      }),
      controller: Type.Optional(Name),
      reason: Type.Optional(Reason()),
      ...rolloutHoldBody,
    },
    CLOSED,
  );
  const rolloutCommand = {
    revision: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_COUNTER,
        description: 'applies only if the rollout is still at this revision',
      }),
    ),
    reason: Type.Optional(Reason()),
  };
  const RolloutCommandBody = Type.Object(rolloutCommand, CLOSED);
  const RolloutRollbackBody = Type.Object(
    { ...rolloutCommand, cancelIntents: Type.Optional(Type.Boolean()) },
    CLOSED,
  );
  const ListRolloutsQuery = Type.Object(
    { status: Type.Optional(Type.Union(ROLLOUT_STATUSES.map((s) => Type.Literal(s)))) },
    CLOSED,
  );

  const AdvanceClockBody = Type.Object(
    { advanceMs: Type.Integer({ minimum: 0, maximum: MAX_CLOCK_STEP_MS }) },
    CLOSED,
  );

  return {
    AcquireBody,
    RenewBody,
    ReleaseBody,
    CancelIntentsBody,
    TakeoverBody,
    ReasonBody,
    CommitBody,
    CommitsBody,
    ListScopesQuery,
    ListIntentsQuery,
    ListCutoversQuery,
    AuditQuery,
    ListRecordsQuery,
    ClaimBody,
    CompleteBody,
    PolicyBody,
    CutoverBody,
    RolloutBody,
    RolloutCommandBody,
    RolloutRollbackBody,
    ListRolloutsQuery,
    JobEventsBody,
    CreateTokenBody,
    AdvanceClockBody,
    ScopeParams: Type.Object({ scope: Name }, CLOSED),
    RecordParams: Type.Object({ scope: Name, name: Name }, CLOSED),
    OperationParams: Type.Object({ operationId: Name }, CLOSED),
    IntentParams: Type.Object({ effectKey: Name }, CLOSED),
    CutoverParams: Type.Object({ cutoverId: Name }, CLOSED),
    RolloutParams: Type.Object({ rolloutId: Name }, CLOSED),
    TokenParams: Type.Object({ id: Name }, CLOSED),
    ListTokensQuery: Type.Object({ tenant: Type.Optional(Tenant) }, CLOSED),
  };
}

export type RequestSchemas = ReturnType<typeof requestSchemas>;
