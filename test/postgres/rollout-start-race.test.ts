/**
 * A scope's first acquire racing a rollout's start on PostgreSQL, in a tenant with no active
 * rollout: the acquire reads the tenant's active rollouts as absent, and a row read as absent takes
 * no row lock. The start is held open, its transaction applied and not committed, while the
 * acquire runs: the acquire must wait for it, then see the rollout and pin the scope by the hash,
 * never pin it by its own policy under a rollout that started first. Both selections: a list
 * naming the scope before it exists, and a prefix (a start lists nothing, so no range lock orders
 * the two either).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planRolloutChange } from '../../src/core/plan/plan-rollout.js';
import {
  ACTIVE_ROLLOUTS_REF,
  RUNNING_CUTOVERS_REF,
  rolloutKey,
  rolloutRef,
} from '../../src/core/rollout-rows.js';
import { admits } from '../../src/core/rollout-rules.js';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { StartRolloutRequest } from '../../src/types.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { applyInOpenTransaction } from './open-apply.js';
import { dropSchema, pgUrl, someoneWaitsIn, testSchema } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('rollout_start_race');
let url: string;
let gate: Fencegate;
let holder: pg.Client;

beforeAll(async () => {
  if (noPostgres) return;
  url = pgUrl();
  gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
  holder = new pg.Client({ connectionString: url });
  holder.on('error', () => undefined);
  await holder.connect();
});

afterAll(async () => {
  if (noPostgres) return;
  await gate.close();
  await holder.end();
  await dropSchema(url, schema);
});

/** A name under `base` that the rollout's hash leaves on fromPolicy at 50 %. */
function notAdmitted(rolloutId: string, base: string): string {
  for (let n = 0; ; n += 1) {
    if (!admits(rolloutId, `${base}-${n}`, 50)) return `${base}-${n}`;
  }
}

/** Settles with 'waits' once the acquire waits on a lock inside apply, or with its outcome. */
async function waitsOrSettles(acquire: Promise<unknown>): Promise<'waits' | 'settled'> {
  const settled = acquire.then(
    () => 'settled' as const,
    () => 'settled' as const,
  );
  for (;;) {
    const first = await Promise.race([
      settled,
      new Promise<'poll'>((resolve) => setTimeout(() => resolve('poll'), 5)),
    ]);
    if (first === 'settled') return first;
    if (await someoneWaitsIn(url, schema, 'apply')) return 'waits';
  }
}

describe.skipIf(noPostgres)('a first acquire racing a rollout start', () => {
  for (const selection of ['list', 'prefix'] as const) {
    it(`waits for a start still open (${selection} selection), then pins the scope by the hash`, async () => {
      // A tenant of its own: one where no rollout was ever started.
      const tenant = gate.forTenant(`race-${selection}`);
      await tenant.registerPolicy({ version: 'v7' });
      await tenant.registerPolicy({ version: 'v8' });
      const rolloutId = `race-${selection}`;
      const scope = notAdmitted(rolloutId, `${selection}/wf`);
      const request: StartRolloutRequest & { rolloutId: string } = {
        rolloutId,
        fromPolicy: 'v7',
        toPolicy: 'v8',
        steps: [50],
        ...(selection === 'list' ? { scopes: [scope] } : { prefix: `${selection}/` }),
      };
      // The start is applied in a transaction the test keeps open.
      await holder.query('BEGIN');
      try {
        await applyInOpenTransaction(
          holder,
          schema,
          tenant.tenant,
          await gate.store.now(),
          (snapshot) => planRolloutChange(snapshot, { action: 'start', request }, 0),
          [
            { type: 'policy', version: 'v7' },
            { type: 'policy', version: 'v8' },
            ACTIVE_ROLLOUTS_REF,
            rolloutRef(rolloutKey(rolloutId)),
            RUNNING_CUTOVERS_REF,
          ],
        );
        // A v8 worker's first acquire of a scope the hash keeps on v7.
        const acquire = tenant.acquire({
          scope,
          holder: 'v8-w',
          ttlMs: 60_000,
          policyVersion: 'v8',
        });
        expect(await waitsOrSettles(acquire)).toBe('waits');
        await holder.query('COMMIT');
        const error = await acquire.then(
          () => null,
          (caught: unknown) => caught,
        );
        expect(isFencegateError(error) && error.code).toBe('policy_mismatch');
        expect(isFencegateError(error) && error.details).toMatchObject({
          currentPolicyVersion: 'v7',
        });
        expect(await tenant.getScope(scope)).toBeNull();
        expect(await tenant.rollouts.get(rolloutId)).toMatchObject({ status: 'running' });
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
      }
    });
  }
});
