/**
 * One commit inside the caller's write transaction: replay check, the check order of
 * core/commit-check.ts, then the mutation, the stored outcome and the audit entries. Used alone
 * and by the group committer, which runs many of these in one transaction.
 */
import { storedOutcomeAnswers } from '../../core/abandon.js';
import { auditEntry } from '../../core/audit-entry.js';
import { holderOfFence, type FenceGrant } from '../../core/fence-holder.js';
import { payloadJson, valueFingerprint, valueJson } from '../../core/prepared-value.js';
import {
  auditReads,
  checkCommit,
  requestFingerprint,
  type RecordSnapshot,
} from '../../core/commit-check.js';
import type { NormalizedCommit } from '../../core/validate.js';
import { FencegateError } from '../../errors.js';
import type {
  AuditRecordChange,
  CommitCommitted,
  CommitRejected,
  CommitResult,
  CommittedRecord,
} from '../../types.js';
import { appendAudit } from './sqlite-audit.js';
import { tombstoneRecord } from './sqlite-records.js';
import { recordSnapshot, scopeSnapshot, type RecordRow, type ScopeRow } from './sqlite-rows.js';
import type { SqliteStatements } from './sqlite-statements.js';

export interface CommitContext {
  statements: SqliteStatements;
  tenant: string;
  now: number;
}

/**
 * Returns the outcome, or an operation_id_conflict error to throw once the transaction is over
 * (throwing inside would roll back the audit entry of the conflict).
 */
export function commitInTransaction(
  ctx: CommitContext,
  request: NormalizedCommit,
): CommitResult | FencegateError {
  const { statements, tenant, now } = ctx;
  const requestHash = requestFingerprint(request);
  const stored = statements.getOperation.get(tenant, request.operationId) as
    { request_fingerprint: string; outcome: string } | undefined;
  if (stored !== undefined) {
    if (storedOutcomeAnswers(stored.request_fingerprint, requestHash)) {
      return { ...(JSON.parse(stored.outcome) as CommitResult), replayed: true };
    }
    appendAudit(
      statements,
      auditEntry({
        at: now,
        tenant,
        scope: request.scope,
        kind: 'commit',
        outcome: 'rejected',
        reason: 'operation_id_conflict',
        operationId: request.operationId,
        taskId: request.taskId ?? null,
        fence: request.fence,
      }),
    );
    return new FencegateError(
      'operation_id_conflict',
      `operationId ${request.operationId} already has an outcome for a different request`,
      { operationId: request.operationId },
    );
  }

  const scopeRow = statements.getScope.get(tenant, request.scope) as ScopeRow | undefined;
  const snapshots = new Map<string, RecordSnapshot>();
  const record = (scope: string, name: string): RecordSnapshot => {
    const key = `${scope}\u0000${name}`;
    let snapshot = snapshots.get(key);
    if (snapshot === undefined) {
      snapshot = recordSnapshot(
        statements.getRecordRevision.get(tenant, scope, name) as RecordRow | undefined,
      );
      snapshots.set(key, snapshot);
    }
    return snapshot;
  };
  const rejection = checkCommit({
    request,
    scope: scopeSnapshot(scopeRow),
    now,
    record,
    wasDeletedAt: (scope, name, revision) =>
      statements.wasDeletedAt.get(tenant, scope, name, revision) !== undefined,
    effectKeyExists: (effectKey) => statements.intentExists.get(tenant, effectKey) !== undefined,
  });

  const base = {
    at: now,
    tenant,
    scope: request.scope,
    kind: 'commit' as const,
    operationId: request.operationId,
    taskId: request.taskId ?? null,
    policyVersion: request.policyVersion ?? scopeRow?.policy_version ?? null,
    holder: holderOfFence(
      scopeRow ?? null,
      request.fence,
      (fence) =>
        (statements.getFenceGrant.get(tenant, request.scope, fence) as FenceGrant | undefined) ??
        null,
    ),
    fence: request.fence,
    currentFence: scopeRow?.fence ?? null,
    leaseExpiresAt: scopeRow?.lease_expires_at ?? null,
    reads: auditReads(request, record),
  };

  if (rejection !== null) {
    const result: CommitRejected = {
      outcome: 'rejected',
      operationId: request.operationId,
      replayed: false,
      error: rejection,
    };
    const records: AuditRecordChange[] = request.writes.map((write) => ({
      name: write.name,
      expected: write.expectRevision,
      actual: record(request.scope, write.name).revision,
      resulting: null,
      fingerprint: null,
      deleted: 'delete' in write,
    }));
    statements.insertOperation.run(
      tenant,
      request.operationId,
      requestHash,
      JSON.stringify(result),
      now,
    );
    appendAudit(
      statements,
      auditEntry({ ...base, outcome: 'rejected', reason: rejection.code, records }),
    );
    return result;
  }

  const committedRecords: CommittedRecord[] = [];
  const auditRecords: AuditRecordChange[] = [];
  for (const write of request.writes) {
    const current = record(request.scope, write.name);
    const revision = current.revision + 1;
    if ('delete' in write) {
      tombstoneRecord(statements, {
        tenant,
        scope: request.scope,
        name: write.name,
        revision,
        now,
      });
      committedRecords.push({
        name: write.name,
        revision,
        incarnation: current.incarnation,
        fingerprint: null,
      });
      auditRecords.push({
        name: write.name,
        expected: write.expectRevision,
        actual: current.revision,
        resulting: revision,
        fingerprint: null,
        deleted: true,
      });
      continue;
    }
    // A write to an absent record starts a new lifetime at this revision.
    const incarnation = current.exists ? current.incarnation : revision;
    const fingerprint = valueFingerprint(write);
    statements.upsertRecord.run({
      tenant,
      scope: request.scope,
      name: write.name,
      value: valueJson(write),
      revision,
      incarnation,
      fingerprint,
      now,
    });
    committedRecords.push({
      name: write.name,
      revision,
      incarnation,
      fingerprint,
    });
    auditRecords.push({
      name: write.name,
      expected: write.expectRevision,
      actual: current.revision,
      resulting: revision,
      fingerprint,
      deleted: false,
    });
  }
  for (const intent of request.intents) {
    statements.insertIntent.run({
      tenant,
      effectKey: intent.effectKey,
      scope: request.scope,
      target: intent.target,
      payload: payloadJson(intent),
      fence: request.fence,
      operationId: request.operationId,
      now,
    });
  }
  const result: CommitCommitted = {
    outcome: 'committed',
    operationId: request.operationId,
    scope: request.scope,
    fence: request.fence,
    records: committedRecords,
    intents: request.intents.map((intent) => ({ effectKey: intent.effectKey, status: 'pending' })),
    replayed: false,
  };
  statements.insertOperation.run(
    tenant,
    request.operationId,
    requestHash,
    JSON.stringify(result),
    now,
  );
  appendAudit(statements, auditEntry({ ...base, outcome: 'committed', records: auditRecords }));
  for (const intent of request.intents) {
    appendAudit(
      statements,
      auditEntry({
        at: now,
        tenant,
        scope: request.scope,
        kind: 'intent',
        outcome: 'pending',
        operationId: request.operationId,
        currentFence: request.fence,
        effectKey: intent.effectKey,
      }),
    );
  }
  return result;
}
