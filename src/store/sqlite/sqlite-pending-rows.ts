/**
 * The rows a SQLite write transaction keeps until its end and then writes many to a statement.
 */
import type Database from 'better-sqlite3';
import type { NewAuditEntry } from '../../core/audit-entry.js';
import type { OperationRow, PutOf } from '../../core/plan/transition.js';
import { recordsColumn } from './sqlite-audit-row.js';
import { fingerprintColumn, outcomeColumn, outcomeOf } from './sqlite-operation-row.js';
import type { SqliteRowStatements } from './sqlite-row-statements.js';

type PendingOperation = PutOf<'operation'> & { tenant: string };

/**
 * Rows a transaction writes at its end, many to a statement (a group commit's batch pays one
 * statement for many, not one each): its audit entries, in order, and its stored outcomes. No plan
 * reads the audit log; a plan reading an outcome stored earlier in the same transaction gets it
 * from here (SqliteSnapshot), so a batch answers a repeated operationId as a replay.
 */
export class PendingRows {
  readonly audit: NewAuditEntry[] = [];
  readonly operations = new Map<string, PendingOperation>();

  storeOutcome(tenant: string, put: PutOf<'operation'>): void {
    this.operations.set(operationKey(tenant, put.operationId), { ...put, tenant });
  }

  /** An outcome stored in this transaction, as a read of its row would give it. */
  operation(tenant: string, operationId: string): OperationRow | null {
    const put = this.operations.get(operationKey(tenant, operationId));
    if (put === undefined) return null;
    const { requestFingerprint, outcome, at } = put.row;
    return {
      requestFingerprint,
      outcome: outcomeOf(operationId, outcomeColumn(outcome)),
      at,
    };
  }
}

function operationKey(tenant: string, operationId: string): string {
  return `${tenant}\0${operationId}`;
}

/** Statement sizes for appending rows: few statements for many rows. */
const MULTI_ROW_SIZES = [64, 8, 1];

/** Writes the pending rows; the audit entries in order. Values and payloads never go here. */
export function writePending(rows: SqliteRowStatements, pending: PendingRows): void {
  insertMany(rows.appendAudit.bind(rows), pending.audit, auditColumns);
  insertMany(rows.insertOperations.bind(rows), [...pending.operations.values()], operationColumns);
}

function insertMany<T>(
  statementOf: (rows: number) => Database.Statement,
  items: readonly T[],
  columnsOf: (item: T) => unknown[],
): void {
  let start = 0;
  for (const size of MULTI_ROW_SIZES) {
    if (items.length - start < size) continue;
    const statement = statementOf(size);
    while (items.length - start >= size) {
      const params: unknown[] = [];
      for (let i = 0; i < size; i++) params.push(...columnsOf(items[start + i] as T));
      statement.run(params);
      start += size;
    }
  }
}

function operationColumns(put: PendingOperation): unknown[] {
  const { requestFingerprint, outcome, at } = put.row;
  return [
    put.tenant,
    put.operationId,
    fingerprintColumn(requestFingerprint),
    outcomeColumn(outcome),
    at,
  ];
}

function auditColumns(entry: NewAuditEntry): unknown[] {
  return [
    entry.at,
    entry.tenant,
    entry.scope,
    entry.kind,
    entry.outcome,
    entry.reason,
    entry.taskId,
    entry.operationId,
    entry.holder,
    entry.policyVersion,
    entry.fence,
    entry.currentFence,
    entry.leaseExpiresAt,
    recordsColumn(entry.records),
    entry.effectKey,
    entry.reads === null ? null : JSON.stringify(entry.reads),
    entry.tokenId ?? null,
  ];
}
