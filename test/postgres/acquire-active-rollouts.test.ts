/**
 * What the rollouts cost a new scope's first acquire on PostgreSQL when none is active: the
 * acquire decides its policy on the tenant's active rollouts, and must not pay for them with a
 * round trip, a re-plan or a lock that every other new scope's acquire waits for. Counted from the
 * statements the store sends (pg's query, observed) and the apply step's payload, in a tenant
 * that never started a rollout and in one whose rollout finished (the document of its active
 * rollouts emptied), from a handle that never read the tenant's rows (a new process).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/canonical.js';
import { planAcquire } from '../../src/core/plan/plan-leases.js';
import { ACTIVE_ROLLOUTS_REF } from '../../src/core/rollout-rows.js';
import { Fencegate } from '../../src/gate.js';
import {
  POSTGRES_MIGRATIONS,
  renderMigration,
} from '../../src/store/postgres/postgres-migrations.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { applyInOpenTransaction } from './open-apply.js';
import {
  dropSchema,
  observingQueries,
  pgUrl,
  someoneWaitsIn,
  statementName,
  testSchema,
} from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('acquire_active');
let url: string;
let gate: Fencegate;
let holder: pg.Client;

async function withPg(work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  if (noPostgres) return;
  url = pgUrl();
  gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
  for (const tenant of ['never', 'finished']) {
    const handle = gate.forTenant(tenant);
    await handle.registerPolicy({ version: 'v7' });
    await handle.registerPolicy({ version: 'v8' });
  }
  const finished = gate.forTenant('finished');
  const request = { fromPolicy: 'v7', toPolicy: 'v8', prefix: 'ramp/', steps: [50] };
  await finished.rollouts.start({ rolloutId: 'rolled-back', ...request });
  await finished.rollouts.rollback({ rolloutId: 'rolled-back' });
  await finished.rollouts.start({ rolloutId: 'completed', ...request, steps: [100] });
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

interface Sent {
  name: string;
  /** The apply step's payload, for an apply. */
  body?: { lock: Record<string, unknown[]>; advisory?: { key: string; shared: boolean }[] };
}

/** The named statements `work` sends, observed on pg's query; the real driver runs each one. */
async function statementsOf(work: () => Promise<unknown>, schemaName = schema): Promise<Sent[]> {
  const sent: Sent[] = [];
  await observingQueries((config) => {
    if (typeof config !== 'object' || typeof config?.name !== 'string') return;
    const name = statementName(config.name, schemaName);
    sent.push(
      name === 'apply'
        ? { name, body: JSON.parse(String(config.values?.[4])) as Sent['body'] }
        : { name },
    );
  }, work);
  return sent;
}

describe.skipIf(noPostgres)('the active rollouts on a new scope’s first acquire', () => {
  for (const tenant of ['never', 'finished']) {
    it(`costs no round trip, no re-plan and no row lock (${tenant})`, async () => {
      // A handle that never read the tenant's rows, as a process just started.
      const fresh = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
      try {
        for (const scope of [`new/${tenant}-1`, `new/${tenant}-2`]) {
          const sent = await statementsOf(() =>
            fresh
              .forTenant(tenant)
              .acquire({ scope, holder: 'w', ttlMs: 60_000, policyVersion: 'v7' }),
          );
          // One statement, the apply, applied as planned: no read first, no second round.
          expect(sent.map((s) => s.name)).toEqual(['apply']);
          // It locks no rollout document, and takes the active rollouts' lock shared only.
          expect(sent[0]!.body!.lock.rollout).toBeUndefined();
          expect(sent[0]!.body!.advisory).toContainEqual({ key: 'A', shared: true });
        }
      } finally {
        await fresh.close();
      }
    });
  }

  // A build before schema version 5 left the emptied document in place when its last rollout
  // finished; the upgrade (schema version 7) deletes such documents, so the tenant's first
  // acquires cost what they cost in a tenant that never started a rollout.
  it('costs no row lock in a tenant whose rollouts finished before schema version 5, once upgraded', async () => {
    const old = testSchema('acquire_v4');
    try {
      await withPg(async (client) => {
        await client.query(`CREATE SCHEMA ${old}`);
        await client.query(
          `CREATE TABLE ${old}.schema_versions (version integer PRIMARY KEY, name text NOT NULL,
             digest text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        for (const migration of POSTGRES_MIGRATIONS.filter((m) => m.version <= 4)) {
          await client.query(renderMigration(migration.sql, old));
          await client.query(
            `INSERT INTO ${old}.schema_versions (version, name, digest) VALUES ($1, $2, $3)`,
            [migration.version, migration.name, sha256Hex(migration.sql)],
          );
        }
        await client.query(
          `INSERT INTO ${old}.rollout_rows (tenant, key, value, row_version)
           VALUES ('upgraded', 'active', '{"kind":"active","rollouts":[]}', 1)`,
        );
      });
      const fresh = await Fencegate.open({
        store: await PostgresStore.open({ url, schema: old }),
      });
      try {
        const sent = await statementsOf(
          () =>
            fresh
              .forTenant('upgraded')
              .acquire({ scope: 'new/upgraded-1', holder: 'w', ttlMs: 60_000 }),
          old,
        );
        expect(sent.map((s) => s.name)).toEqual(['apply']);
        expect(sent[0]!.body!.lock.rollout).toBeUndefined();
      } finally {
        await fresh.close();
      }
    } finally {
      await dropSchema(url, old);
    }
  });

  it('lets two first acquires of new scopes run at once after a rollout finished', async () => {
    const tenant = gate.forTenant('finished');
    await holder.query('BEGIN');
    try {
      // One acquire applied and held open, its locks kept...
      await applyInOpenTransaction(
        holder,
        schema,
        tenant.tenant,
        await gate.store.now(),
        (snapshot) =>
          planAcquire(snapshot, {
            scope: 'held/a',
            holder: 'w',
            ttlMs: 60_000,
            policyVersion: 'v7',
          }),
        [ACTIVE_ROLLOUTS_REF],
      );
      // ...while another one runs: it must not wait for the first.
      const other = tenant.acquire({
        scope: 'held/b',
        holder: 'w',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      let done = false;
      const settled = await Promise.race([
        other.finally(() => (done = true)).then(() => 'settled' as const),
        (async () => {
          while (!done) {
            if (await someoneWaitsIn(url, schema, 'apply')) return 'waits' as const;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          return 'settled' as const;
        })(),
      ]);
      done = true;
      expect(settled).toBe('settled');
    } finally {
      await holder.query('COMMIT');
    }
    expect(await tenant.getScope('held/a')).toMatchObject({ policyVersion: 'v7' });
    expect(await tenant.getScope('held/b')).toMatchObject({ policyVersion: 'v7' });
  });
});
