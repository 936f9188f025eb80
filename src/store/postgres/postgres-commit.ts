/**
 * A commit on PostgreSQL: the request is prepared here (fingerprints, values as JSON text) and
 * decided by one call of `<schema>.commit(...)` (postgres-sql-commit.ts), or of
 * `<schema>.commit_release(...)` for one that releases its lease.
 */
import { requestFingerprint } from '../../core/commit-check.js';
import { commitRejection, operationIdConflict, refusalError } from '../../core/refusal-messages.js';
import { payloadJson, valueFingerprint, valueJson } from '../../core/prepared-value.js';
import type { NormalizedCommit } from '../../core/validate.js';
import type { CommitResult } from '../../types.js';

/** The request as the SQL function reads it. */
export interface CommitPayload {
  scope: string;
  fence: number;
  operationId: string;
  taskId: string | null;
  policyVersion: string | null;
  reads: { scope: string; name: string; revision: number }[];
  writes: {
    name: string;
    expectRevision: number;
    delete: boolean;
    value: string | null;
    fingerprint: string | null;
  }[];
  intents: { effectKey: string; target: string; payload: string }[];
}

export function commitPayload(request: NormalizedCommit): CommitPayload {
  return {
    scope: request.scope,
    fence: request.fence,
    operationId: request.operationId,
    taskId: request.taskId ?? null,
    policyVersion: request.policyVersion ?? null,
    reads: request.reads.map(({ scope, name, revision }) => ({ scope, name, revision })),
    writes: request.writes.map((write) =>
      'delete' in write
        ? {
            name: write.name,
            expectRevision: write.expectRevision,
            delete: true,
            value: null,
            fingerprint: null,
          }
        : {
            name: write.name,
            expectRevision: write.expectRevision,
            delete: false,
            value: valueJson(write),
            fingerprint: valueFingerprint(write),
          },
    ),
    intents: request.intents.map((intent) => ({
      effectKey: intent.effectKey,
      target: intent.target,
      payload: payloadJson(intent),
    })),
  };
}

export function commitStatement(
  schema: string,
  tenant: string,
  request: NormalizedCommit,
  now: number | null,
) {
  const values = [tenant, JSON.stringify(commitPayload(request)), now, requestFingerprint(request)];
  if (request.release === true) {
    // postgres-sql-commit-release.ts: the commit, and the release when it committed.
    return {
      name: `fencegate_commit_release_${schema}`,
      text: `SELECT ${schema}.commit_release($1, $2, $3, $4, $5::jsonb) AS answer`,
      values: [...values, request.job === undefined ? null : JSON.stringify(request.job)],
    };
  }
  return {
    name: `fencegate_commit_${schema}`,
    text: `SELECT ${schema}.commit($1, $2, $3, $4) AS answer`,
    values,
  };
}

export type CommitAnswer = CommitResult | { conflict: true };

/**
 * Several commits in one `commit_batch` call (postgres-sql-group-commit.ts). The caller passes the
 * items sorted by (tenant, scope), see batchOrder.
 */
export function commitBatchStatement(
  schema: string,
  items: readonly { tenant: string; request: NormalizedCommit }[],
  now: number | null,
) {
  return {
    name: `fencegate_commit_batch_${schema}`,
    text: `SELECT ${schema}.commit_batch($1, $2, $3, $4) AS answer`,
    values: [
      items.map((item) => item.tenant),
      JSON.stringify(items.map((item) => commitPayload(item.request))),
      now,
      items.map((item) => requestFingerprint(item.request)),
    ],
  };
}

/** Stable order by (tenant, scope) by code unit: the lock order of every transaction. */
export function batchOrder<T extends { tenant: string; request: { scope: string } }>(
  items: readonly T[],
): T[] {
  const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return items
    .map((item, index) => ({ item, index }))
    .sort(
      (a, b) =>
        compare(a.item.tenant, b.item.tenant) ||
        compare(a.item.request.scope, b.item.request.scope) ||
        a.index - b.index,
    )
    .map(({ item }) => item);
}

/** The function's answer as the Store answers it; an operationId conflict is thrown. */
export function toCommitResult(request: NormalizedCommit, answer: CommitAnswer): CommitResult {
  if ('conflict' in answer) {
    throw refusalError(operationIdConflict(request.operationId));
  }
  return inFieldOrder(answer);
}

/**
 * jsonb sorts object keys; answers are rebuilt in the field order of types.ts for readability. A
 * rejection is rebuilt by core from its code and details: the stored message is never answered.
 */
export function inFieldOrder(result: CommitResult): CommitResult {
  if (result.outcome === 'rejected') {
    return {
      outcome: 'rejected',
      operationId: result.operationId,
      replayed: result.replayed,
      error: commitRejection(result.error.code, result.error.details),
    };
  }
  return {
    outcome: 'committed',
    operationId: result.operationId,
    scope: result.scope,
    fence: result.fence,
    records: result.records.map(({ name, revision, incarnation, fingerprint }) => ({
      name,
      revision,
      incarnation,
      fingerprint,
    })),
    intents: result.intents.map(({ effectKey, status }) => ({ effectKey, status })),
    replayed: result.replayed,
  };
}
