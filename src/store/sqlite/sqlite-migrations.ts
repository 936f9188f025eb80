/**
 * The SQLite schema's versions: an ordered list applied at open inside one write transaction and
 * recorded in `fencegate_schema`, so several processes opening one file agree on it.
 *
 * Version 1 is the baseline (sqlite-schema.ts), the first of a numbering that starts again with
 * the first release: the schema the pre-release versions built step by step, in one piece. A
 * change from now on is a new entry here, never an edit of one already released. Files made
 * before the baseline recorded their steps in `fencegate_migrations` instead, and may hold rows in
 * forms this version does not read; no release wrote them, so they are refused, not upgraded.
 */
import { FencegateError } from '../../errors.js';
import type { SqliteDatabase } from './sqlite-database.js';
import {
  SQLITE_BASELINE_SQL,
  SQLITE_GRANT_TOKENS_SQL,
  SQLITE_RECORDS_BY_REVISION_SQL,
  SQLITE_ROLLOUTS_SQL,
} from './sqlite-schema.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'baseline', sql: SQLITE_BASELINE_SQL },
  { version: 2, name: 'grant tokens', sql: SQLITE_GRANT_TOKENS_SQL },
  { version: 3, name: 'records by revision', sql: SQLITE_RECORDS_BY_REVISION_SQL },
  { version: 4, name: 'rollouts', sql: SQLITE_ROLLOUTS_SQL },
];

/** Applies the missing versions; refuses a file made before the baseline or by a newer version. */
export function migrate(db: SqliteDatabase): void {
  const apply = db.transaction(() => {
    refusePreBaseline(db);
    db.exec(`CREATE TABLE IF NOT EXISTS fencegate_schema (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    const row = db.prepare('SELECT MAX(version) AS v FROM fencegate_schema').get() as {
      v: number | null;
    };
    const current = row.v ?? 0;
    const known = SQLITE_MIGRATIONS.at(-1)?.version ?? 0;
    if (current > known) {
      // A newer version may keep rows in forms this one would misread (stored outcomes, for one).
      throw new FencegateError(
        'store_unavailable',
        `the SQLite file is at schema ${current}, written by a newer fencegate; this version knows up to ${known}: run the newer version`,
      );
    }
    for (const migration of SQLITE_MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.prepare(
        "INSERT INTO fencegate_schema (version, name, applied_at) VALUES (?, ?, datetime('now'))",
      ).run(migration.version, migration.name);
    }
  });
  apply.immediate();
}

function refusePreBaseline(db: SqliteDatabase): void {
  const earlier = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fencegate_migrations'")
    .get();
  if (earlier === undefined) return;
  const row = db.prepare('SELECT MAX(version) AS v FROM fencegate_migrations').get() as {
    v: number | null;
  };
  throw new FencegateError(
    'store_unavailable',
    `the SQLite file was made by a pre-release fencegate (schema ${row.v ?? 0} of the pre-release numbering), which this version does not open: no release wrote it, so delete the file or open the store at a new path`,
  );
}
