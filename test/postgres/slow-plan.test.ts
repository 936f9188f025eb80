/**
 * A plan that takes longer than the clock tolerance (a rollout step or a cutover over many
 * thousands of scopes on a loaded machine) still applies on PostgreSQL: the apply refuses an
 * estimate of the database clock more than a second off, so the engine plans the next round at
 * the time its apply is expected to run, rather than failing every round the same way.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { planAcquire } from '../../src/core/plan/plan-leases.js';
import { PostgresConnection } from '../../src/store/postgres/postgres-connection.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { RowCache } from '../../src/store/postgres/postgres-snapshot.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { parsePostgresUrl } from '../../src/store/postgres/postgres-url.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('slow_plan');
/** Longer than the engine's clock tolerance (1 s). */
const PLAN_MS = 1_300;

beforeAll(async () => {
  if (noPostgres) return;
  // Opening the store creates the schema; the engine below runs on it with the database clock.
  await (await PostgresStore.open({ url: pgUrl(), schema })).close();
});

afterAll(async () => {
  if (noPostgres) return;
  await dropSchema(pgUrl(), schema);
});

function busyFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // A plan is synchronous: this is what planning thousands of scopes looks like to the clock.
  }
}

it.skipIf(noPostgres)(
  'applies a plan that takes longer than the clock tolerance',
  async () => {
    const { connectionString, target } = parsePostgresUrl(pgUrl());
    const connection = new PostgresConnection(connectionString, target, { max: 2 });
    const engine = new PostgresEngine(connection, schema, new RowCache(), undefined);
    try {
      await engine.calibrate();
      let plans = 0;
      const answer = await engine.run('default', (snapshot) => {
        plans += 1;
        busyFor(PLAN_MS);
        return planAcquire(snapshot, { scope: 'slow', holder: 'w', ttlMs: 600_000 });
      });
      expect(answer).toMatchObject({ fence: 1 });
      // One round at the first estimate, one at the expected time of the apply (and, at most, one
      // more for rows read on the way).
      expect(plans).toBeLessThanOrEqual(4);
    } finally {
      await connection.close();
    }
  },
  60_000,
);
