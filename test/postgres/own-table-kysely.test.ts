/**
 * Bring your own table with Kysely: a caller-owned `workflow_memory` table updated through a real
 * Kysely instance (PostgresDialect over a pg Pool) in `db.transaction().execute(...)`, after
 * `assertFenceKysely(sql, trx, ...)` with Kysely's own `sql` tag. The current holder's update
 * commits; a worker whose fence an operator took over gets stale_fence and its update never lands;
 * an operator's takeover waits for a checked transaction that is still open.
 */
import { Kysely, PostgresDialect, sql, type ColumnType, type Transaction } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFencegateError, type ErrorCode } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { assertFenceKysely } from '../../src/store/postgres/assert-fence.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Grant } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

interface WorkflowMemoryTable {
  tenant_id: string;
  workflow_id: string;
  memory_stream: string;
  /** jsonb: read back parsed, written as JSON text. */
  compacted_payload: ColumnType<unknown, string, string>;
  memory_revision: number;
}

interface Database {
  workflow_memory: WorkflowMemoryTable;
}

const schema = testSchema('own_table_kysely');
const TENANT = 'acme';
let url: string;
let db: Kysely<Database>;
/** The worker's view of fencegate and the operator's: two stores on one schema. */
let worker: Fencegate;
let operator: Fencegate;

beforeAll(async () => {
  url = pgUrl();
  // Store time is the database clock here, as in production: no `now` is passed to the check.
  worker = (await Fencegate.open({ store: await PostgresStore.open({ url, schema }) })).forTenant(
    TENANT,
  );
  operator = (await Fencegate.open({ store: await PostgresStore.open({ url, schema }) })).forTenant(
    TENANT,
  );
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await db.schema
    .withSchema(schema)
    .createTable('workflow_memory')
    .addColumn('tenant_id', 'text', (column) => column.notNull())
    .addColumn('workflow_id', 'text', (column) => column.notNull())
    .addColumn('memory_stream', 'text', (column) => column.notNull())
    .addColumn('compacted_payload', 'jsonb', (column) => column.notNull())
    .addColumn('memory_revision', 'integer', (column) => column.notNull())
    .addPrimaryKeyConstraint('workflow_memory_pk', ['tenant_id', 'workflow_id', 'memory_stream'])
    .execute();
});

afterAll(async () => {
  await worker.store.close();
  await operator.store.close();
  await db.destroy();
  await dropSchema(url, schema);
});

let n = 0;
async function workflow(): Promise<{ workflowId: string; scope: string }> {
  n += 1;
  const workflowId = `wf-${n}`;
  await db
    .withSchema(schema)
    .insertInto('workflow_memory')
    .values({
      tenant_id: TENANT,
      workflow_id: workflowId,
      memory_stream: 'memory',
      compacted_payload: JSON.stringify({ facts: [] }),
      memory_revision: 0,
    })
    .execute();
  return { workflowId, scope: `${workflowId}/memory` };
}

async function memory(workflowId: string): Promise<{ payload: unknown; revision: number }> {
  const row = await db
    .withSchema(schema)
    .selectFrom('workflow_memory')
    .select(['compacted_payload', 'memory_revision'])
    .where('tenant_id', '=', TENANT)
    .where('workflow_id', '=', workflowId)
    .where('memory_stream', '=', 'memory')
    .executeTakeFirstOrThrow();
  return { payload: row.compacted_payload, revision: row.memory_revision };
}

interface Compaction {
  workflowId: string;
  scope: string;
  fence: number;
  readRevision: number;
  candidate: unknown;
}

/** The user's own guarded UPDATE: freshness by the table's revision. */
async function update(trx: Transaction<Database>, input: Compaction): Promise<bigint> {
  const result = await trx
    .withSchema(schema)
    .updateTable('workflow_memory')
    .set((eb) => ({
      compacted_payload: JSON.stringify(input.candidate),
      memory_revision: eb('memory_revision', '+', 1),
    }))
    .where('tenant_id', '=', TENANT)
    .where('workflow_id', '=', input.workflowId)
    .where('memory_stream', '=', 'memory')
    .where('memory_revision', '=', input.readRevision)
    .executeTakeFirst();
  return result.numUpdatedRows;
}

/** The worker's transaction: authority checked by fencegate, then the user's UPDATE. */
async function compact(
  input: Compaction,
  reached: { update: boolean } = { update: false },
): Promise<bigint> {
  return db.transaction().execute(async (trx) => {
    await assertFenceKysely(sql, trx, {
      tenant: TENANT,
      scope: input.scope,
      fence: input.fence,
      schema,
    });
    reached.update = true;
    return update(trx, input);
  });
}

async function failsWith(call: Promise<unknown>, code: ErrorCode): Promise<Error> {
  try {
    await call;
  } catch (error) {
    expect(isFencegateError(error) ? error.code : error).toBe(code);
    return error as Error;
  }
  throw new Error(`expected ${code}`);
}

describe.skipIf(noPostgres)('assertFenceKysely in a Kysely transaction', () => {
  it("lets the current holder's transaction commit its update", async () => {
    const { workflowId, scope } = await workflow();
    const grant = await worker.acquire({ scope, holder: 'controller-v8', ttlMs: 60_000 });
    const updated = await compact({
      workflowId,
      scope,
      fence: grant.fence,
      readRevision: 0,
      candidate: { facts: ['a'] },
    });
    expect(updated).toBe(1n);
    expect(await memory(workflowId)).toEqual({ payload: { facts: ['a'] }, revision: 1 });
  });

  it('stops a worker whose fence an operator took over: stale_fence, and its UPDATE never lands', async () => {
    const { workflowId, scope } = await workflow();
    const old = await worker.acquire({ scope, holder: 'celery-v7', ttlMs: 60_000 });
    const replacement = await operator.takeover(scope, {
      holder: 'controller-v8',
      reason: 'policy 8',
    });
    expect(replacement.fence).toBe(old.fence + 1);

    const reached = { update: false };
    const error = await failsWith(
      compact(
        { workflowId, scope, fence: old.fence, readRevision: 0, candidate: { facts: ['stale'] } },
        reached,
      ),
      'stale_fence',
    );
    expect(error).toMatchObject({ details: { currentFence: replacement.fence } });
    expect(error.message).toBe(
      `the presented fence is not the scope's current fence ${replacement.fence}`,
    );
    expect(reached.update).toBe(false);

    // Even a worker that swallows the error cannot write in that transaction.
    const ignored = db.transaction().execute(async (trx) => {
      const refusal = await assertFenceKysely(sql, trx, {
        tenant: TENANT,
        scope,
        fence: old.fence,
        schema,
      }).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isFencegateError(refusal) ? refusal.code : refusal).toBe('stale_fence');
      return update(trx, {
        workflowId,
        scope,
        fence: old.fence,
        readRevision: 0,
        candidate: { facts: ['ignored'] },
      });
    });
    await expect(ignored).rejects.toMatchObject({ code: '25P02' });

    expect(await memory(workflowId)).toEqual({ payload: { facts: [] }, revision: 0 });
  });

  it('holds the scope row: a takeover waits for the open checked transaction, which commits under its fence', async () => {
    const { workflowId, scope } = await workflow();
    const grant = await worker.acquire({ scope, holder: 'worker', ttlMs: 60_000 });
    let takeover: Promise<Grant> | undefined;
    let moved = false;
    const updated = await db.transaction().execute(async (trx) => {
      await assertFenceKysely(sql, trx, { tenant: TENANT, scope, fence: grant.fence, schema });
      takeover = operator.takeover(scope, { holder: 'operator' });
      void takeover.then(
        () => (moved = true),
        () => undefined,
      );
      await waitUntilBlocked(`${schema}.apply(`);
      const count = await update(trx, {
        workflowId,
        scope,
        fence: grant.fence,
        readRevision: 0,
        candidate: { facts: ['checked'] },
      });
      expect(moved).toBe(false);
      return count;
    });
    expect(updated).toBe(1n);
    if (takeover === undefined) throw new Error('the takeover never started');
    expect((await takeover).fence).toBe(grant.fence + 1);

    // The worker's next transaction is stale.
    await failsWith(
      compact({
        workflowId,
        scope,
        fence: grant.fence,
        readRevision: 1,
        candidate: { facts: ['late'] },
      }),
      'stale_fence',
    );
    expect(await memory(workflowId)).toEqual({ payload: { facts: ['checked'] }, revision: 1 });
  });

  it('judges the lease at the store time it is given (`now`)', async () => {
    const { scope } = await workflow();
    const grant = await worker.acquire({ scope, holder: 'worker', ttlMs: 60_000 });
    const expiresAt = grant.leaseExpiresAt ?? 0;
    const check = (now: number) =>
      db
        .transaction()
        .execute((trx) =>
          assertFenceKysely(sql, trx, { tenant: TENANT, scope, fence: grant.fence, schema, now }),
        );
    await check(expiresAt - 1);
    await failsWith(check(expiresAt), 'lease_expired');
  });
});

/** Explicit sequencing: returns once a statement containing `call` is waiting for a lock. */
async function waitUntilBlocked(call: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND position(${call} in query) > 0`.execute(db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${call} never waited for the lock`);
}
