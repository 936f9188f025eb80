/**
 * Bring your own table: a caller-owned `workflow_memory` table (the guard of the 002 seed) updated
 * in the caller's own transaction after `assert_fence`. The current holder's update commits; a
 * stale worker's update never lands; a takeover cannot slip between a check and its commit. The
 * same through a real Kysely transaction: own-table-kysely.test.ts.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFencegateError, type ErrorCode, type FencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { assertFence } from '../../src/store/postgres/assert-fence.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('own_table');
const TENANT = 'acme';
let url: string;
let gate: Fencegate;
let clock: ManualClock;
let pool: pg.Pool;

beforeAll(async () => {
  url = pgUrl();
  clock = new ManualClock(Date.now());
  // The store runs on an injected clock here; assert_fence is then given the same time (`now`).
  gate = (
    await Fencegate.open({ store: await PostgresStore.open({ url, schema, clock }) })
  ).forTenant(TENANT);
  pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on('error', () => undefined);
  await pool.query(`CREATE TABLE ${schema}.workflow_memory (
    tenant_id text NOT NULL, workflow_id text NOT NULL, memory_stream text NOT NULL,
    compacted_payload jsonb NOT NULL, memory_revision bigint NOT NULL,
    PRIMARY KEY (tenant_id, workflow_id, memory_stream))`);
});

afterAll(async () => {
  await gate.store.close();
  await pool.end();
  await dropSchema(url, schema);
});

let n = 0;
async function workflow(): Promise<{ workflowId: string; scope: string }> {
  n += 1;
  const workflowId = `wf-${n}`;
  await pool.query(
    `INSERT INTO ${schema}.workflow_memory VALUES ($1, $2, 'memory', '{"facts": []}', 0)`,
    [TENANT, workflowId],
  );
  return { workflowId, scope: `${workflowId}/memory` };
}

async function memory(workflowId: string): Promise<{ payload: unknown; revision: number }> {
  const { rows } = await pool.query<{ compacted_payload: unknown; memory_revision: string }>(
    `SELECT compacted_payload, memory_revision FROM ${schema}.workflow_memory
     WHERE tenant_id = $1 AND workflow_id = $2 AND memory_stream = 'memory'`,
    [TENANT, workflowId],
  );
  return { payload: rows[0]?.compacted_payload, revision: Number(rows[0]?.memory_revision) };
}

/** The worker's guarded write: authority checked by fencegate, freshness by the table's revision. */
async function compact(
  client: pg.ClientBase,
  input: {
    workflowId: string;
    scope: string;
    fence: number;
    readRevision: number;
    candidate: unknown;
  },
): Promise<number> {
  await client.query('BEGIN');
  try {
    await assertFence(client, {
      tenant: TENANT,
      scope: input.scope,
      fence: input.fence,
      schema,
      now: clock.now(),
    });
    const { rowCount } = await client.query(
      `UPDATE ${schema}.workflow_memory
       SET compacted_payload = $1, memory_revision = memory_revision + 1
       WHERE tenant_id = $2 AND workflow_id = $3 AND memory_stream = 'memory' AND memory_revision = $4`,
      [JSON.stringify(input.candidate), TENANT, input.workflowId, input.readRevision],
    );
    await client.query('COMMIT');
    return rowCount ?? 0;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
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

describe.skipIf(noPostgres)('assert_fence in the caller transaction', () => {
  it('lets the current holder update its own table', async () => {
    const { workflowId, scope } = await workflow();
    const grant = await gate.acquire({ scope, holder: 'controller-v8', ttlMs: 60_000 });
    const client = await pool.connect();
    try {
      const updated = await compact(client, {
        workflowId,
        scope,
        fence: grant.fence,
        readRevision: 0,
        candidate: { facts: ['a'] },
      });
      expect(updated).toBe(1);
    } finally {
      client.release();
    }
    expect(await memory(workflowId)).toEqual({ payload: { facts: ['a'] }, revision: 1 });
  });

  it('stops a stale worker after a takeover: its UPDATE never lands', async () => {
    const { workflowId, scope } = await workflow();
    const old = await gate.acquire({ scope, holder: 'celery-v7', ttlMs: 60_000 });
    const replacement = await gate.takeover(scope, { holder: 'controller-v8', reason: 'policy 8' });
    expect(replacement.fence).toBe(old.fence + 1);
    const client = await pool.connect();
    try {
      const error = await failsWith(
        compact(client, {
          workflowId,
          scope,
          fence: old.fence,
          readRevision: 0,
          candidate: { facts: ['stale'] },
        }),
        'stale_fence',
      );
      expect(error).toMatchObject({ details: { currentFence: replacement.fence } });
      expect(error.message).toBe(
        `the presented fence is not the scope's current fence ${replacement.fence}`,
      );

      // Even a worker that ignores the error cannot write in that transaction.
      await client.query('BEGIN');
      await assertFence(client, {
        tenant: TENANT,
        scope,
        fence: old.fence,
        schema,
        now: clock.now(),
      }).catch(() => undefined);
      const update = client.query(
        `UPDATE ${schema}.workflow_memory SET memory_revision = memory_revision + 1 WHERE tenant_id = $1 AND workflow_id = $2`,
        [TENANT, workflowId],
      );
      await expect(update).rejects.toMatchObject({ code: '25P02' });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await memory(workflowId)).toEqual({ payload: { facts: [] }, revision: 0 });
  });

  it('holds the scope row: a takeover waits for the checked transaction, which then commits under its fence', async () => {
    const { workflowId, scope } = await workflow();
    const grant = await gate.acquire({ scope, holder: 'worker', ttlMs: 60_000 });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await assertFence(client, {
        tenant: TENANT,
        scope,
        fence: grant.fence,
        schema,
        now: clock.now(),
      });
      const takeover = gate.takeover(scope, { holder: 'operator' });
      await waitUntilBlocked(`${schema}.apply(`);
      await client.query(
        `UPDATE ${schema}.workflow_memory SET compacted_payload = '{"facts": ["checked"]}', memory_revision = 1
         WHERE tenant_id = $1 AND workflow_id = $2 AND memory_revision = 0`,
        [TENANT, workflowId],
      );
      await client.query('COMMIT');
      const moved = await takeover;
      expect(moved.fence).toBe(grant.fence + 1);
      // The worker's next transaction is stale.
      await failsWith(
        compact(client, {
          workflowId,
          scope,
          fence: grant.fence,
          readRevision: 1,
          candidate: { facts: ['late'] },
        }),
        'stale_fence',
      );
    } finally {
      client.release();
    }
    expect(await memory(workflowId)).toEqual({ payload: { facts: ['checked'] }, revision: 1 });
  });

  it("names each refusal with its catalog code and the commit rejection's message and details", async () => {
    const { workflowId, scope } = await workflow();
    const client = await pool.connect();
    const attempt = (fence: number) =>
      compact(client, { workflowId, scope, fence, readRevision: 0, candidate: { facts: ['x'] } });
    // A commit through fencegate with the same fence, in the same situation, is rejected with the
    // same code, message and details.
    const refusedLikeCommit = async (fence: number, code: ErrorCode) => {
      const error = (await failsWith(attempt(fence), code)) as FencegateError;
      const commit = await gate.commit({ scope, fence, operationId: randomUUID() });
      expect(commit.outcome).toBe('rejected');
      if (commit.outcome !== 'rejected') return;
      expect({ code: error.code, message: error.message, details: error.details }).toEqual(
        commit.error,
      );
    };
    try {
      await refusedLikeCommit(1, 'scope_not_found');
      const grant = await gate.acquire({ scope, holder: 'w', ttlMs: 1_000 });
      clock.advance(1_000);
      await refusedLikeCommit(grant.fence, 'lease_expired');
      const cancelled = await gate.cancel(scope);
      await refusedLikeCommit(cancelled.fence, 'authority_revoked');
      await refusedLikeCommit(cancelled.fence - 1, 'stale_fence');
      const deleted = await gate.deleteScope(scope);
      await refusedLikeCommit(deleted.fence, 'scope_deleted');
    } finally {
      client.release();
    }
    expect((await memory(workflowId)).revision).toBe(0);
  });
});

async function waitUntilBlocked(call: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [call],
    );
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`${call} never waited for the lock`);
}
