/**
 * load → plan → apply on SQLite: `applyPlan` runs one plan over a SqliteSnapshot and writes its
 * transition, inside the caller's write transaction (one operation alone, or one of a group
 * commit's batch). The write lock is held from before the first read, so the transition's
 * `expect` holds trivially; its puts are written by row type, except its stored outcome, which
 * waits with its audit entries in PendingRows for the transaction's end.
 */
import { jsonOf } from '../../core/prepared-value.js';
import type { Answer, Put, Snapshot, Transition } from '../../core/plan/transition.js';
import type { PendingRows } from './sqlite-pending-rows.js';
import type { SqliteRowStatements } from './sqlite-row-statements.js';
import { SqliteSnapshot } from './sqlite-snapshot.js';

export interface PlanContext {
  rows: SqliteRowStatements;
  tenant: string;
  now: number;
  /** Where the audit entries and stored outcomes wait until `writePending`, before the commit. */
  pending: PendingRows;
}

/** Plans over the rows as they are now and writes the transition's rows; returns the answer. */
export function applyPlan<A>(
  ctx: PlanContext,
  plan: (snapshot: Snapshot) => Transition<A>,
): Answer<A> {
  const transition = plan(new SqliteSnapshot(ctx.tenant, ctx.now, ctx.rows, ctx.pending));
  for (const put of transition.put) {
    if (put.type === 'operation') {
      ctx.pending.storeOutcome(ctx.tenant, put);
    } else {
      writeRow(ctx.rows, ctx.tenant, put);
    }
  }
  for (const ref of transition.delete ?? []) ctx.rows.deleteRollout.run(ctx.tenant, ref.key);
  for (const entry of transition.audit) ctx.pending.audit.push(entry);
  return transition.answer;
}

/** Every row but stored outcomes, which wait in PendingRows. */
function writeRow(
  rows: SqliteRowStatements,
  tenant: string,
  put: Exclude<Put, { type: 'operation' }>,
): void {
  switch (put.type) {
    case 'scope': {
      const { row } = put;
      rows.putScope.run(
        tenant,
        put.scope,
        row.fence,
        row.holder,
        row.leaseExpiresAt,
        row.policyVersion,
        row.status,
        row.updatedAt,
        row.grantTokenId ?? null,
      );
      return;
    }
    case 'fenceGrant':
      // A grant is written once and kept.
      rows.putFenceGrant.run(tenant, put.scope, put.fence, put.row.holder);
      return;
    case 'record': {
      const { row } = put;
      rows.putRecord.run(
        tenant,
        put.scope,
        put.name,
        row.exists ? 1 : 0,
        row.valueJson,
        row.revision,
        row.incarnation,
        row.fingerprint,
        row.updatedAt,
      );
      return;
    }
    case 'deletion':
      rows.putDeletion.run(tenant, put.scope, put.name, put.revision);
      return;
    case 'intent': {
      // An intent's scope, target, payload, fence and operation never change after its commit.
      const { row } = put;
      rows.putIntent.run(
        tenant,
        put.effectKey,
        row.scope,
        row.target,
        jsonOf(row.payload),
        row.status,
        row.attempts,
        row.fence,
        row.operationId,
        row.claimFence,
        row.providerRef,
        row.lastError,
        row.createdAt,
        row.updatedAt,
        row.unknownOutcomes,
        row.claimedBy,
        row.claimExpiresAt,
        row.nextAttemptAt,
      );
      return;
    }
    case 'policy': {
      const { row } = put;
      rows.putPolicy.run(
        tenant,
        put.version,
        row.digest,
        row.description,
        row.registeredBy,
        row.registeredAt,
      );
      return;
    }
    case 'cutover': {
      const { row } = put;
      const inserted = rows.insertCutover.run(
        tenant,
        put.cutoverId,
        row.requestFingerprint,
        row.toPolicy,
        row.holder,
        row.leaseTtlMs,
        row.reason,
        row.status,
        row.startSeq,
        row.startedAt,
        row.completedAt,
      );
      if (inserted.changes === 0) {
        rows.updateCutover.run(row.status, row.completedAt, tenant, put.cutoverId);
      }
      // The put's names are the ones it adds at the list's end (core/plan/transition.ts).
      for (const scope of row.scopes) rows.planCutoverScope.run(tenant, put.cutoverId, scope);
      return;
    }
    case 'cutoverStep':
      rows.putCutoverStep.run(
        tenant,
        put.cutoverId,
        put.scope,
        put.row.fence,
        put.row.skipped === true ? 1 : 0,
      );
      return;
    case 'job': {
      const { row } = put;
      rows.putJob.run(
        tenant,
        put.jobId,
        row.scope,
        row.policyVersion,
        row.fence,
        row.state,
        row.attempt,
        row.at,
      );
      return;
    }
    case 'rollout':
      rows.putRollout.run(tenant, put.key, JSON.stringify(put.row));
      return;
  }
}
