/**
 * Bring your own table: fencegate on PostgreSQL guards an UPDATE of your own `workflow_memory`
 * table. The worker checks its fence with `assert_fence` inside its own transaction, then updates
 * the row with the revision it read; a stale controller generation's transaction aborts before its
 * UPDATE can run.
 *
 *   FENCEGATE_PG_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/postgres-own-table.ts
 *
 * The example keeps everything in a schema of its own (`fencegate_example_<pid>`) and drops it at
 * the end; a real deployment uses the default `fencegate` schema next to its own tables.
 */
import pg from 'pg';
import { Fencegate } from 'fencegate';

const url =
  process.env.FENCEGATE_PG_URL ??
  process.env.FENCEGATE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const schema = `fencegate_example_${process.pid}`;
const storeUrl = new URL(url);
storeUrl.searchParams.set('schema', schema);

const gate = await Fencegate.open({ store: storeUrl.toString() });
const db = new pg.Pool({ connectionString: url });

// Your table, guarded by revision like the seed's conditional UPDATE.
await db.query(`CREATE TABLE IF NOT EXISTS ${schema}.workflow_memory (
  tenant_id text, workflow_id text, memory_stream text, compacted_payload jsonb,
  memory_revision bigint, PRIMARY KEY (tenant_id, workflow_id, memory_stream))`);
await db.query(`INSERT INTO ${schema}.workflow_memory VALUES ('default', 'wf-123', 'memory', '{"facts": []}', 0)
  ON CONFLICT DO NOTHING`);
const scope = 'wf-123/memory';

/** One guarded write: authority checked by fencegate, freshness by the row's revision. */
async function compact(fence: number, readRevision: number, candidate: unknown): Promise<string> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    // Raises SQLSTATE FG001 unless `fence` is current, the scope has a holder and its lease is live.
    // It holds the scope row until COMMIT, so no takeover can land in between.
    await client.query(`SELECT ${schema}.assert_fence($1, $2, $3)`, ['default', scope, fence]);
    const { rowCount } = await client.query(
      `UPDATE ${schema}.workflow_memory SET compacted_payload = $1, memory_revision = memory_revision + 1
       WHERE tenant_id = 'default' AND workflow_id = 'wf-123' AND memory_stream = 'memory'
         AND memory_revision = $2`,
      [JSON.stringify(candidate), readRevision],
    );
    await client.query('COMMIT');
    return rowCount === 1 ? 'committed' : 'rejected: the memory changed since it was read';
  } catch (error) {
    await client.query('ROLLBACK');
    const { code, message, detail } = error as { code?: string; message: string; detail?: string };
    if (code !== 'FG001') throw error;
    // DETAIL carries the catalog code and the values that decided it.
    return `rejected: ${message} ${detail ?? ''}`;
  } finally {
    client.release();
  }
}

async function memoryRow(): Promise<{ compacted_payload: unknown; memory_revision: string }> {
  const { rows } = await db.query<{ compacted_payload: unknown; memory_revision: string }>(
    `SELECT compacted_payload, memory_revision FROM ${schema}.workflow_memory WHERE workflow_id = 'wf-123'`,
  );
  if (rows[0] === undefined) throw new Error('the memory row is missing');
  return rows[0];
}

try {
  // A policy-7 job holds the workflow and reads its memory...
  const v7 = await gate.acquire({ scope, holder: 'celery-policy-7', ttlMs: 60_000 });
  const readByV7 = Number((await memoryRow()).memory_revision);

  // ...when operations hand the workflow to the policy-8 controller: the fence moves on.
  const v8 = await gate.takeover(scope, {
    holder: 'langgraph-policy-8',
    ttlMs: 60_000,
    reason: 'policy 8',
  });
  const readByV8 = Number((await memoryRow()).memory_revision);
  const byV8 = await compact(v8.fence, readByV8, { facts: ['required handoff fact'] });
  console.log(`policy 8 (fence ${v8.fence}): ${byV8}`);

  // The policy-7 job resumes and tries to commit its obsolete compaction.
  const byV7 = await compact(v7.fence, readByV7, { facts: [] });
  console.log(`policy 7 (fence ${v7.fence}): ${byV7}`);

  const final = await memoryRow();
  console.log(
    `memory now: ${JSON.stringify(final.compacted_payload)} at revision ${final.memory_revision}`,
  );
  if (byV8 !== 'committed' || !byV7.includes('stale_fence') || final.memory_revision !== '1') {
    throw new Error('the stale generation was not stopped');
  }
} finally {
  await gate.close();
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await db.end();
}
