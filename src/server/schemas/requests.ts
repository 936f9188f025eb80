/**
 * Request schemas (bodies, query strings, path parameters). Ranges that HTTP-API.md calls
 * configurable come from a Limits object, so the schemas are built per server by
 * `requestSchemas(limits)`; their static types do not depend on the limits.
 */
import { Type } from '@sinclair/typebox';
import { NAME_PATTERN, NAME_RULE, type Limits } from '../../core/limits.js';
import { AuditKindSchema, AuditOutcomeSchema, IntentStatusSchema } from './answers.js';
import {
  CLOSED,
  Counter,
  Cursor,
  MAX_LABEL_LENGTH,
  Name,
  Reason,
  Target,
  Tenant,
} from './common.js';

/** The largest single step of the test clock: ten years. */
export const MAX_CLOCK_STEP_MS = 10 * 365 * 86_400_000;

export function requestSchemas(limits: Limits) {
  const ttl = Type.Integer({ minimum: limits.minTtlMs, maximum: limits.maxTtlMs });
  const listLimit = Type.Integer({ minimum: 1, maximum: limits.maxListLimit });

  const AcquireBody = Type.Object(
    { scope: Name, holder: Name, ttlMs: ttl, policyVersion: Type.Optional(Name) },
    CLOSED,
  );
  const RenewBody = Type.Object({ scope: Name, holder: Name, fence: Counter, ttlMs: ttl }, CLOSED);
  const ReleaseBody = Type.Object({ scope: Name, holder: Name, fence: Counter }, CLOSED);
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
    },
    CLOSED,
  );

  const ListScopesQuery = Type.Object(
    {
      prefix: Type.Optional(
        Type.String({
          pattern: `^$|${NAME_PATTERN.source}`,
          maxLength: 256,
          description: `empty, or ${NAME_RULE}`,
        }),
      ),
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
    },
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
    TakeoverBody,
    ReasonBody,
    CommitBody,
    ListScopesQuery,
    ListIntentsQuery,
    AuditQuery,
    CreateTokenBody,
    AdvanceClockBody,
    ScopeParams: Type.Object({ scope: Name }, CLOSED),
    RecordParams: Type.Object({ scope: Name, name: Name }, CLOSED),
    OperationParams: Type.Object({ operationId: Name }, CLOSED),
    IntentParams: Type.Object({ effectKey: Name }, CLOSED),
    TokenParams: Type.Object({ id: Name }, CLOSED),
  };
}

export type RequestSchemas = ReturnType<typeof requestSchemas>;
