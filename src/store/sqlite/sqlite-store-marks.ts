/**
 * What a SQLite store keeps about itself beyond its data: the verified checkpoint audit retention
 * pruned through (so a server continues verifying after the pruned entries, across restarts), and
 * the mark that its first-run tokens were made (they are made once per store, ever).
 */
import { read, type SqliteDatabase } from './sqlite-database.js';

/** Keeps the checkpoint unless the stored one already reaches as far or further. */
export function saveVerifiedCheckpoint(db: SqliteDatabase, lastSeq: number, json: string): void {
  db.prepare(
    `INSERT INTO verified_checkpoint (id, last_seq, checkpoint) VALUES (1, ?, ?)
     ON CONFLICT (id) DO UPDATE SET last_seq = excluded.last_seq, checkpoint = excluded.checkpoint
     WHERE excluded.last_seq > verified_checkpoint.last_seq`,
  ).run(lastSeq, json);
}

export function loadVerifiedCheckpoint(db: SqliteDatabase): string | null {
  const row = read(
    () =>
      db.prepare('SELECT checkpoint FROM verified_checkpoint WHERE id = 1').get() as
        { checkpoint: string } | undefined,
  );
  return row?.checkpoint ?? null;
}

/** Inside the caller's write transaction: true when the first-run tokens were made before. */
export function firstRunTokensMade(db: SqliteDatabase): boolean {
  return db.prepare('SELECT 1 FROM first_run_tokens WHERE id = 1').get() !== undefined;
}

/** Inside the caller's write transaction. */
export function markFirstRunTokensMade(db: SqliteDatabase, at: number): void {
  db.prepare('INSERT OR IGNORE INTO first_run_tokens (id, made_at) VALUES (1, ?)').run(at);
}
