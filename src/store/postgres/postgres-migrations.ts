/**
 * The PostgreSQL schema's versions: an ordered list of SQL texts, applied at open in one
 * transaction under an advisory lock (so processes opening the store together apply each once) and
 * recorded in `<schema>.schema_versions`. Every object lives in the store's own schema; `@schema@`
 * in the texts is replaced by its name.
 *
 * Version 1 is the baseline, the first of a numbering that starts again with the first release:
 * the tables grouped by concern and the few functions the store calls. A change from now on is a
 * new entry here, never an edit of one already released. Each version is recorded with the digest
 * of its text. Schemas made by pre-release builds (with `<schema>.migrations`, a version 1 whose
 * functions decided in SQL, or a version recorded from another text of it) are refused, not
 * upgraded: no release made them (postgres-migrate.ts).
 */
import {
  APPLY_SQL,
  CUTOVER_ROWS_WITHOUT_LISTS_SQL,
  GRANT_TOKENS_SQL,
  ROLLOUT_DELETES_SQL,
  ROLLOUTS_SQL,
} from './postgres-sql-apply.js';
import { AUDIT_SQL } from './postgres-sql-audit.js';
import { FENCE_SQL } from './postgres-sql-fence.js';
import { INTENT_NOTIFY_SQL } from './postgres-sql-intent-notify.js';
import {
  EMPTY_ACTIVE_ROLLOUTS_SQL,
  INTENTS_BY_SCOPE_KEY_SQL,
  RECORDS_BY_REVISION_SQL,
  TABLES_SQL,
} from './postgres-sql-tables.js';

export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * The tables; the one step that writes them (core plans every change in the process); the audit
 * horizon; assert_fence for the caller's own transactions; the intent notifications.
 */
const BASELINE_SQL = [TABLES_SQL, APPLY_SQL, AUDIT_SQL, FENCE_SQL, INTENT_NOTIFY_SQL].join('');

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 1, name: 'baseline', sql: BASELINE_SQL },
  { version: 2, name: 'grant tokens', sql: GRANT_TOKENS_SQL },
  { version: 3, name: 'records by revision', sql: RECORDS_BY_REVISION_SQL },
  { version: 4, name: 'rollouts', sql: ROLLOUTS_SQL },
  { version: 5, name: 'rollout deletes', sql: ROLLOUT_DELETES_SQL },
  { version: 6, name: 'intents by scope key', sql: INTENTS_BY_SCOPE_KEY_SQL },
  { version: 7, name: 'empty active rollouts', sql: EMPTY_ACTIVE_ROLLOUTS_SQL },
  { version: 8, name: 'cutover rows without lists', sql: CUTOVER_ROWS_WITHOUT_LISTS_SQL },
];

/** Schema names are interpolated into SQL, so only plain lowercase identifiers are accepted. */
export const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

export function renderMigration(sql: string, schema: string): string {
  return sql.replaceAll('@schema@', schema);
}
