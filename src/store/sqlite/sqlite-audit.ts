import type { NewAuditEntry } from '../../core/audit-entry.js';
import type { SqliteStatements } from './sqlite-statements.js';

/** Appends one audit entry inside the caller's transaction; values and payloads never go here. */
export function appendAudit(statements: SqliteStatements, entry: NewAuditEntry): void {
  statements.appendAudit.run(
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
    entry.records === null ? null : JSON.stringify(entry.records),
    entry.effectKey,
    entry.reads === null ? null : JSON.stringify(entry.reads),
  );
}
