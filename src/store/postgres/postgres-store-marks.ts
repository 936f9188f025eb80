/**
 * What a PostgreSQL store keeps about itself beyond its data: the verified checkpoint audit
 * retention pruned through (so a server continues verifying after the pruned entries, across
 * restarts), and the mark that its first-run tokens were made (they are made once per store, ever).
 */
import type { PoolClient } from 'pg';
import type { PostgresCalls } from './postgres-calls.js';

/** Keeps the checkpoint unless the stored one already reaches as far or further. */
export async function saveVerifiedCheckpoint(
  calls: PostgresCalls,
  lastSeq: number,
  json: string,
): Promise<void> {
  const s = calls.schema;
  await calls.rows(
    `INSERT INTO ${s}.verified_checkpoint (id, last_seq, checkpoint) VALUES (1, $1, $2)
     ON CONFLICT (id) DO UPDATE SET last_seq = excluded.last_seq, checkpoint = excluded.checkpoint
     WHERE excluded.last_seq > ${s}.verified_checkpoint.last_seq`,
    [lastSeq, json],
  );
}

export async function loadVerifiedCheckpoint(calls: PostgresCalls): Promise<string | null> {
  const rows = await calls.rows<{ checkpoint: string }>(
    `SELECT checkpoint FROM ${calls.schema}.verified_checkpoint WHERE id = 1`,
    [],
  );
  return rows[0]?.checkpoint ?? null;
}

/**
 * Inside the caller's transaction, which holds the bootstrap lock: marks the first-run tokens as
 * made; false when they were made before.
 */
export async function markFirstRunTokensMade(client: PoolClient, schema: string): Promise<boolean> {
  const result = await client.query(
    `INSERT INTO ${schema}.first_run_tokens (id, made_at) VALUES (1, ${schema}.db_now())
     ON CONFLICT (id) DO NOTHING`,
  );
  return (result.rowCount ?? 0) > 0;
}
