/**
 * How an audit entry's record changes are kept in SQLite's `audit` table. Every commit, refused or
 * not, appends an entry, and the field names of its changes were about a third of the row: each
 * change is kept as an array in field order instead, the only form.
 */
import type { AuditRecordChange } from '../../types.js';

type CompactChange = [string, number, number, number | null, string | null, 0 | 1];

export function recordsColumn(records: readonly AuditRecordChange[] | null): string | null {
  if (records === null) return null;
  return JSON.stringify(
    records.map((change): CompactChange => [
      change.name,
      change.expected,
      change.actual,
      change.resulting,
      change.fingerprint,
      change.deleted ? 1 : 0,
    ]),
  );
}

/** The changes as they were appended, fields in the order the plan built them. */
export function recordsOf(column: string | null): AuditRecordChange[] | null {
  if (column === null) return null;
  return (JSON.parse(column) as CompactChange[]).map(
    ([name, expected, actual, resulting, fingerprint, deleted]) => ({
      name,
      expected,
      actual,
      resulting,
      fingerprint,
      deleted: deleted === 1,
    }),
  );
}
