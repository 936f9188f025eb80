import type { NewAuditEntry } from '../../core/audit-entry.js';
import type { SqliteStatements } from './sqlite-statements.js';

/** Appends one audit entry inside the caller's transaction; values and payloads never go here. */
export function appendAudit(statements: SqliteStatements, entry: NewAuditEntry): void {
  statements.appendAudit.run({
    ...entry,
    records: entry.records === null ? null : JSON.stringify(entry.records),
  });
}
