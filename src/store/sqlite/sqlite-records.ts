import type { SqliteStatements } from './sqlite-statements.js';

export interface TombstoneParams {
  tenant: string;
  scope: string;
  name: string;
  revision: number;
  now: number;
}

/**
 * Deletes a record: the row stays as a tombstone carrying the deletion's revision, and the
 * deletion is remembered so a later stale write can tell a read of absence from a read of a
 * lifetime that has ended.
 */
export function tombstoneRecord(statements: SqliteStatements, params: TombstoneParams): void {
  statements.tombstoneRecord.run(params);
  statements.recordDeletion.run({
    tenant: params.tenant,
    scope: params.scope,
    name: params.name,
    revision: params.revision,
  });
}
