/**
 * Small helpers shared by the conformance cases: expecting catalog errors, reading a tenant's
 * whole authoritative state and its audit log, and the "rejected and nothing changed" check every
 * rejection case runs. A refusal the store decides is compared whole (code, message and details)
 * with the one core builds (core/refusal-messages.ts), so a store that words it otherwise fails.
 */
import { expect } from 'vitest';
import type { FencegateApi } from '../../api.js';
import { commitRejection, type Refusal } from '../../core/refusal-messages.js';
import { isFencegateError, type ErrorCode, type FencegateError } from '../../errors.js';
import type {
  AuditEntry,
  CommitCommitted,
  CommitRejected,
  CommitRequest,
  CommitResult,
  Grant,
  Intent,
  RecordState,
  ScopeState,
} from '../../types.js';
import type { ConformanceSubject } from './subject.js';

export const LONG_TTL = 60_000;

/**
 * Awaits a call that must fail with `expected`: a code, or the whole refusal core builds for the
 * situation (then its message and details must be equal too). Returns the error for further checks.
 */
export async function expectFailure(
  call: Promise<unknown>,
  expected: ErrorCode | Refusal,
): Promise<FencegateError> {
  const code = typeof expected === 'string' ? expected : expected.code;
  let value: unknown;
  try {
    value = await call;
  } catch (error) {
    if (!isFencegateError(error)) throw error;
    expect({ code: error.code, message: error.message }).toMatchObject({ code });
    if (typeof expected !== 'string') {
      expect({ code: error.code, message: error.message, details: error.details }).toEqual(
        expected,
      );
    }
    return error;
  }
  throw new Error(`expected ${code}, but the call answered ${JSON.stringify(value)}`);
}

export function expectCommitted(result: CommitResult): CommitCommitted {
  if (result.outcome !== 'committed') {
    throw new Error(`expected a commit, got rejection ${JSON.stringify(result.error)}`);
  }
  return result;
}

export function expectRejected(
  result: CommitResult,
  code: CommitRejected['error']['code'],
): CommitRejected {
  if (result.outcome !== 'rejected') {
    throw new Error(`expected rejection ${code}, but the commit was accepted`);
  }
  expect(result.error.code).toBe(code);
  // Every store answers the rejection core renders from the code and details.
  expect(result.error).toEqual(commitRejection(code, result.error.details));
  return result;
}

/** Everything a tenant can read, to prove a refused request changed nothing. */
export interface TenantState {
  scopes: ScopeState[];
  records: Record<string, RecordState[]>;
  intents: Intent[];
}

export async function tenantState(gate: FencegateApi): Promise<TenantState> {
  const scopes: ScopeState[] = [];
  let cursor: string | null = null;
  do {
    const page = await gate.listScopes(cursor === null ? { limit: 1000 } : { limit: 1000, cursor });
    scopes.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  const records: Record<string, RecordState[]> = {};
  for (const scope of scopes) records[scope.scope] = await gate.listRecords(scope.scope);
  const intents: Intent[] = [];
  cursor = null;
  do {
    const page = await gate.listIntents(
      cursor === null ? { limit: 1000 } : { limit: 1000, cursor },
    );
    intents.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return { scopes, records, intents };
}

/** The tenant's audit entries after `afterSeq`, in seq order. */
export async function auditAfter(gate: FencegateApi, afterSeq = 0): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let after = afterSeq;
  for (;;) {
    const page = await gate.audit({ afterSeq: after, limit: 1000 });
    entries.push(...page.items);
    const last = page.items.at(-1);
    if (page.nextAfterSeq === null || last === undefined) return entries;
    after = Math.max(page.nextAfterSeq, last.seq);
  }
}

export async function lastSeq(gate: FencegateApi): Promise<number> {
  return (await auditAfter(gate)).at(-1)?.seq ?? 0;
}

/** Unique operation ids for one test. */
export class OperationIds {
  #next = 0;
  constructor(private readonly prefix = 'op') {}
  next(): string {
    this.#next += 1;
    return `${this.prefix}-${this.#next}`;
  }
}

export function acquire(
  gate: FencegateApi,
  scope: string,
  holder: string,
  options: { ttlMs?: number; policyVersion?: string } = {},
): Promise<Grant> {
  return gate.acquire({
    scope,
    holder,
    ttlMs: options.ttlMs ?? LONG_TTL,
    ...(options.policyVersion === undefined ? {} : { policyVersion: options.policyVersion }),
  });
}

/** Commits one value write under a grant; returns the committed answer. */
export async function put(
  gate: FencegateApi,
  grant: { scope: string; fence: number },
  name: string,
  expectRevision: number,
  value: unknown,
  operationId: string,
): Promise<CommitCommitted> {
  return expectCommitted(
    await gate.commit({
      scope: grant.scope,
      fence: grant.fence,
      operationId,
      writes: [{ name, expectRevision, value }],
    }),
  );
}

/**
 * Advances the store clock to the moment the scope's lease ends (the lease is then expired).
 * Assumes the clock has not moved since the scope last changed: updatedAt is store time then.
 */
export async function expireLease(subject: ConformanceSubject, scope: string): Promise<void> {
  const state = await subject.gate.getScope(scope);
  if (state === null || state.leaseExpiresAt === null) {
    throw new Error(`scope ${scope} has no lease to expire`);
  }
  await subject.advanceClock(state.leaseExpiresAt - state.updatedAt);
}

/**
 * The check behind every rejection case: the commit is rejected with `code`, nothing the tenant can
 * read changed, exactly one audit entry records the rejected attempt, the rejection is stored under
 * its operationId, and a retry of the same request answers it again with `replayed: true`.
 */
export async function expectCleanRejection(
  gate: FencegateApi,
  request: CommitRequest,
  code: CommitRejected['error']['code'],
): Promise<CommitRejected> {
  const before = await tenantState(gate);
  const seq = await lastSeq(gate);

  const rejected = expectRejected(await gate.commit(request), code);
  expect(rejected).toMatchObject({ operationId: request.operationId, replayed: false });

  expect(await tenantState(gate)).toEqual(before);
  const entries = await auditAfter(gate, seq);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({
    kind: 'commit',
    outcome: 'rejected',
    reason: code,
    operationId: request.operationId,
    scope: request.scope,
    fence: request.fence,
  });

  expect(await gate.getOperation(request.operationId)).toEqual(rejected);
  expect(await gate.commit(request)).toEqual({ ...rejected, replayed: true });
  expect(await tenantState(gate)).toEqual(before);
  return rejected;
}
