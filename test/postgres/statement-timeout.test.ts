/**
 * A commit that waits on a row lock held by another connection (a stuck transaction, an operator's
 * open psql session) does not wait forever: the store's statement timeout cancels it, PostgreSQL
 * rolls it back, and the answer is store_unavailable with nothing changed. Once the lock is gone,
 * the same commit lands.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS } from '../../src/store/postgres/postgres-pool-options.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('stmt_timeout');
let url: string;

beforeAll(() => {
  url = pgUrl();
});

afterAll(async () => {
  if (url !== undefined) await dropSchema(url, schema);
});

/** Holds an exclusive lock on every scope row from its own connection until released. */
async function lockScopes(): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  await client.query(`SELECT 1 FROM ${schema}.scopes FOR UPDATE`);
  return {
    async release() {
      await client.query('ROLLBACK');
      await client.end();
    },
  };
}

describe.skipIf(noPostgres)('the statement timeout of the PostgreSQL store', () => {
  for (const timeoutMs of [500, undefined]) {
    const which = timeoutMs === undefined ? 'the default' : `${timeoutMs} ms`;
    it(`cancels a commit waiting on a row lock after ${which}: store_unavailable`, async () => {
      const store = await PostgresStore.open({
        url,
        schema,
        ...(timeoutMs === undefined ? {} : { pool: { statementTimeoutMillis: timeoutMs } }),
      });
      const gate = await Fencegate.open({ store });
      try {
        const scope = `wf-${timeoutMs ?? 'default'}/memory`;
        const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 600_000 });
        const commit = {
          scope,
          fence,
          operationId: `op-locked-${timeoutMs ?? 'default'}`,
          writes: [{ name: 'summary', expectRevision: 0, value: { v: 1 } }],
        };
        const lock = await lockScopes();
        const started = Date.now();
        let refused: unknown;
        try {
          refused = await gate.commit(commit).catch((error: unknown) => error);
        } finally {
          await lock.release();
        }
        expect(Date.now() - started).toBeGreaterThanOrEqual(
          (timeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS) - 50,
        );
        expect(refused).toMatchObject({
          code: 'store_unavailable',
          message: expect.stringMatching(/statement cancelled/) as unknown,
        });
        expect(await gate.getOperation(commit.operationId)).toBeNull();
        expect(await gate.getRecord(scope, 'summary')).toMatchObject({ revision: 0 });
        expect(await gate.commit(commit)).toMatchObject({ outcome: 'committed' });
      } finally {
        await gate.close();
      }
    }, 60_000);
  }
});
