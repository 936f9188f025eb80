/**
 * PostgreSQL adapter cases the conformance suite cannot express: migrations, URLs and schemas,
 * values stored as text, races between concurrent transactions (settled by row locks, never by
 * timing), the audit horizon, the database clock, and the unreachable-server answer.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planAcquire } from '../../src/core/plan/plan-leases.js';
import { Fencegate } from '../../src/gate.js';
import { isFencegateError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import {
  POSTGRES_MIGRATIONS,
  renderMigration,
} from '../../src/store/postgres/postgres-migrations.js';
import { sha256Hex } from '../../src/core/canonical.js';
import { expectUpgradedGrant, SCHEMA_1_ROWS } from '../helpers/schema-1-grant.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { redactPostgresUrl } from '../../src/store/postgres/postgres-url.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitResult } from '../../src/types.js';
import {
  dropSchema,
  pgUrl,
  someoneWaitsIn,
  testSchema,
  untilDatabase,
  withClient,
} from './pg-helpers.js';
import { applyInOpenTransaction, waitersInApply } from './open-apply.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('store');
let url: string;
let clock: ManualClock;
let gate: Fencegate;

beforeAll(async () => {
  url = pgUrl();
  clock = new ManualClock();
  gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema, clock }) });
});

afterAll(async () => {
  await gate.close();
  await dropSchema(url, schema);
});

let counter = 0;
function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

async function caught(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe.skipIf(noPostgres)('opening', () => {
  it('records every schema version once, also when several processes open a new schema together', async () => {
    const fresh = testSchema('open');
    try {
      const stores = await Promise.all(
        [1, 2, 3].map(() => PostgresStore.open({ url, schema: fresh, pool: { max: 1 } })),
      );
      await Promise.all(stores.map((store) => store.close()));
      const versions = await withClient(url, async (client) =>
        (
          await client.query<{ version: number }>(
            `SELECT version FROM ${fresh}.schema_versions ORDER BY version`,
          )
        ).rows.map((row) => row.version),
      );
      expect(versions).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    } finally {
      await dropSchema(url, fresh);
    }
  });

  it("keeps version 1's text: a schema made by it is recorded with this digest", () => {
    expect(sha256Hex(POSTGRES_MIGRATIONS[0]!.sql)).toBe(
      '47f2ee41e9a348b9bfda195f7c16f0440be55c80de154981ed31ac93f5c28bba',
    );
  });

  it('upgrades a schema at version 1: its grants bind no token, its audit entries keep their hashes', async () => {
    const old = testSchema('v1');
    const baseline = POSTGRES_MIGRATIONS[0]!;
    try {
      await withClient(url, async (client) => {
        await client.query(`CREATE SCHEMA ${old}`);
        await client.query(
          `CREATE TABLE ${old}.schema_versions (version integer PRIMARY KEY, name text NOT NULL,
             digest text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        await client.query(renderMigration(baseline.sql, old));
        await client.query(
          `INSERT INTO ${old}.schema_versions (version, name, digest) VALUES (1, 'baseline', $1)`,
          [sha256Hex(baseline.sql)],
        );
        await client.query(
          `INSERT INTO ${old}.scopes (${SCHEMA_1_ROWS.scopeColumns}, row_version)
             VALUES (${SCHEMA_1_ROWS.scope}, 1)`,
        );
        await client.query(
          `INSERT INTO ${old}.audit (${SCHEMA_1_ROWS.auditColumns}) VALUES (${SCHEMA_1_ROWS.audit})`,
        );
      });
      const store = await PostgresStore.open({ url, schema: old });
      try {
        await expectUpgradedGrant(store);
      } finally {
        await store.close();
      }
    } finally {
      await dropSchema(url, old);
    }
  });

  it('upgrades a schema at version 2 to the latest: its pinned scopes ramp in a rollout', async () => {
    const old = testSchema('v2');
    try {
      await withClient(url, async (client) => {
        await client.query(`CREATE SCHEMA ${old}`);
        await client.query(
          `CREATE TABLE ${old}.schema_versions (version integer PRIMARY KEY, name text NOT NULL,
             digest text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        for (const migration of POSTGRES_MIGRATIONS.slice(0, 2)) {
          await client.query(renderMigration(migration.sql, old));
          await client.query(
            `INSERT INTO ${old}.schema_versions (version, name, digest) VALUES ($1, $2, $3)`,
            [migration.version, migration.name, sha256Hex(migration.sql)],
          );
        }
        for (const version of ['v7', 'v8']) {
          await client.query(
            `INSERT INTO ${old}.policies (tenant, version, digest, description, registered_by,
               registered_at, row_version) VALUES ('acme', $1, NULL, NULL, NULL, 1, 1)`,
            [version],
          );
        }
        await client.query(
          `INSERT INTO ${old}.scopes (tenant, scope, fence, holder, lease_expires_at,
             policy_version, status, updated_at, grant_token_id, row_version)
           VALUES ('acme', 'orders/1', 1, NULL, NULL, 'v7', 'active', 1, NULL, 1)`,
        );
      });
      const store = await PostgresStore.open({ url, schema: old });
      const gate = await Fencegate.open({ store, tenant: 'acme' });
      try {
        const { rows } = await withClient(url, (client) =>
          client.query<{ version: number }>(
            `SELECT version FROM ${old}.schema_versions ORDER BY version`,
          ),
        );
        expect(rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
        const rollout = await gate.rollouts.start({
          rolloutId: 'r1',
          fromPolicy: 'v7',
          toPolicy: 'v8',
          scopes: ['orders/1'],
          steps: [100],
        });
        expect(rollout).toMatchObject({ status: 'completed', percent: 100 });
        expect(await gate.getScope('orders/1')).toMatchObject({
          fence: 2,
          holder: null,
          policyVersion: 'v8',
        });
      } finally {
        await gate.close();
      }
    } finally {
      await dropSchema(url, old);
    }
  });

  it('takes the schema from ?schema= in the URL, and openStore opens postgres:// URLs', async () => {
    const fresh = testSchema('url');
    try {
      const separator = url.includes('?') ? '&' : '?';
      const store = await openStore(`${url}${separator}schema=${fresh}`);
      expect(store.kind).toBe('postgres');
      expect((store as PostgresStore).schema).toBe(fresh);
      await store.acquire('default', { scope: 'u', holder: 'h', ttlMs: 1000 });
      await store.close();
      const count = await withClient(url, async (client) =>
        Number(
          (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${fresh}.scopes`)).rows[0]
            ?.n,
        ),
      );
      expect(count).toBe(1);
    } finally {
      await dropSchema(url, fresh);
    }
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    const error = await caught(PostgresStore.open({ url, schema: 'x; DROP TABLE y' }));
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
  });

  it('answers store_unavailable for an unreachable server, without the password', async () => {
    const error = await caught(
      PostgresStore.open({
        url: 'postgres://fg:s3cret-pw@127.0.0.1:1/db',
        pool: { connectionTimeoutMillis: 2000 },
      }),
    );
    expect(isFencegateError(error) && error.code).toBe('store_unavailable');
    expect(String((error as Error).message)).toContain('127.0.0.1:1/db');
    expect(JSON.stringify(error)).not.toContain('s3cret');
    expect(String((error as Error).message)).not.toContain('s3cret');
  });

  it('takes connections from a lent pool and leaves it open on close; refuses anything else as one', async () => {
    const lent = new pg.Pool({ connectionString: url, max: 2 });
    try {
      for (let round = 0; round < 2; round += 1) {
        const store = await PostgresStore.open({ url, schema, clock, lentPool: lent });
        const lender = await Fencegate.open({ store });
        const scope = unique('lent');
        expect((await lender.acquire({ scope, holder: 'w', ttlMs: 1000 })).fence).toBe(1);
        expect(lent.totalCount).toBeGreaterThan(0);
        await lender.close();
        expect(lent.ended).toBe(false);
        const refused = await caught(store.getScope(lender.tenant, scope));
        expect(isFencegateError(refused) && refused.code).toBe('store_unavailable');
      }
      expect((await lent.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    } finally {
      await lent.end();
    }
    const wrong = await caught(PostgresStore.open({ url, schema, lentPool: { max: 2 } }));
    expect(isFencegateError(wrong) && wrong.code).toBe('invalid_request');
    expect((wrong as Error).message).toContain('lentPool must be a pg.Pool');
  });

  it('redacts passwords in URLs', () => {
    expect(redactPostgresUrl('postgres://u:p@ss@h:5432/d')).toBe('postgres://u:***@h:5432/d');
    expect(redactPostgresUrl('postgresql://h/d?password=x&sslmode=require')).toBe(
      'postgresql://h/d?password=***&sslmode=require',
    );
  });
});

describe.skipIf(noPostgres)('values and time', () => {
  it('reads a value back exactly: key order, NUL characters, unicode, large and small numbers', async () => {
    const scope = unique('values');
    const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const value = {
      z: 1,
      a: ['\u0000', 'é☃𝄞'],
      // The largest integer a value may hold (beyond it a number would be rounded: refused).
      n: Number.MAX_SAFE_INTEGER,
      tiny: 5e-324,
      f: 0.30000000000000004,
      neg: -0,
      nested: { b: null, a: true },
    };
    const result = await gate.commit({
      scope,
      fence,
      operationId: unique('op'),
      writes: [{ name: 'v', expectRevision: 0, value }],
      intents: [{ effectKey: unique('k'), target: 'hook', payload: { '\u0000': 'x' } }],
    });
    expect(result.outcome).toBe('committed');
    const read = await gate.getRecord(scope, 'v');
    expect(JSON.stringify(read.value)).toBe(JSON.stringify(value));
  });

  it("judges leases by the database clock when no clock is injected, also when it is far from this process's clock", async () => {
    const fresh = testSchema('dbclock');
    // Opened before the database clock moves: its estimate of store time is then an hour off.
    const calibratedEarlier = await PostgresStore.open({ url, schema: fresh });
    try {
      // The database host's clock an hour ahead of this process's (a schema of its own).
      await withClient(url, (client) =>
        client.query(
          `CREATE OR REPLACE FUNCTION ${fresh}.db_now() RETURNS bigint LANGUAGE sql VOLATILE AS
           $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3600000 $$`,
        ),
      );
      const openedAfter = await PostgresStore.open({ url, schema: fresh });
      try {
        for (const store of [openedAfter, calibratedEarlier]) {
          const before = await store.now();
          expect(before - Date.now()).toBeGreaterThan(3_500_000);
          const grant = await store.acquire('default', {
            scope: unique('dbclock'),
            holder: 'w',
            ttlMs: 60_000,
          });
          const after = await store.now();
          // Planned at an estimate of the database clock: never ahead of it, at most 1 s behind.
          expect(grant.leaseExpiresAt).toBeGreaterThanOrEqual(before - 1_000 + 60_000);
          expect(grant.leaseExpiresAt).toBeLessThanOrEqual(after + 60_000);
        }
      } finally {
        await openedAfter.close();
      }
    } finally {
      await calibratedEarlier.close();
      await dropSchema(url, fresh);
    }
  });

  it("judges a lease expired by the database clock, though this process's clock says it is live", async () => {
    const fresh = testSchema('dbclock_late');
    const store = await PostgresStore.open({ url, schema: fresh });
    const late = await Fencegate.open({ store });
    try {
      const grant = await late.acquire({ scope: 'late', holder: 'w', ttlMs: 60_000 });
      // The database clock jumps two minutes ahead: the lease is over by store time.
      await withClient(url, (client) =>
        client.query(
          `CREATE OR REPLACE FUNCTION ${fresh}.db_now() RETURNS bigint LANGUAGE sql VOLATILE AS
           $$ SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + 120000 $$`,
        ),
      );
      const result = await late.commit({
        scope: 'late',
        fence: grant.fence,
        operationId: unique('op'),
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
      });
      expect(result.outcome === 'rejected' && result.error.code).toBe('lease_expired');
      expect((await late.getRecord('late', 'r')).exists).toBe(false);
    } finally {
      await store.close();
      await dropSchema(url, fresh);
    }
  });
});

describe.skipIf(noPostgres)('concurrent transactions', () => {
  it('two commits that each read the record the other writes: never both commit (no write skew)', async () => {
    for (let round = 0; round < 10; round++) {
      const a = unique('skew-a');
      const b = unique('skew-b');
      const ga = await gate.acquire({ scope: a, holder: 'w', ttlMs: 60_000 });
      const gb = await gate.acquire({ scope: b, holder: 'w', ttlMs: 60_000 });
      const results = await Promise.all([
        gate.commit({
          scope: a,
          fence: ga.fence,
          operationId: unique('op'),
          reads: [{ scope: b, name: 'r', revision: 0 }],
          writes: [{ name: 'r', expectRevision: 0, value: 'a' }],
        }),
        gate.commit({
          scope: b,
          fence: gb.fence,
          operationId: unique('op'),
          reads: [{ scope: a, name: 'r', revision: 0 }],
          writes: [{ name: 'r', expectRevision: 0, value: 'b' }],
        }),
      ]);
      const outcomes = results
        .map((r) => (r.outcome === 'committed' ? 'committed' : r.error.code))
        .sort();
      expect(outcomes).toEqual(['committed', 'stale_dependency']);
    }
  });

  it('one operationId sent from two scopes at once: one outcome is stored, the other call conflicts', async () => {
    for (let round = 0; round < 10; round++) {
      const a = unique('opid-a');
      const b = unique('opid-b');
      const ga = await gate.acquire({ scope: a, holder: 'w', ttlMs: 60_000 });
      const gb = await gate.acquire({ scope: b, holder: 'w', ttlMs: 60_000 });
      const operationId = unique('shared-op');
      const settled = await Promise.allSettled([
        gate.commit({
          scope: a,
          fence: ga.fence,
          operationId,
          writes: [{ name: 'r', expectRevision: 0, value: 1 }],
        }),
        gate.commit({
          scope: b,
          fence: gb.fence,
          operationId,
          writes: [{ name: 'r', expectRevision: 0, value: 1 }],
        }),
      ]);
      const fulfilled = settled.filter((s) => s.status === 'fulfilled');
      const rejected = settled.filter((s) => s.status === 'rejected');
      expect(fulfilled).toHaveLength(1);
      expect(rejected).toHaveLength(1);
      const reason: unknown = (rejected[0] as PromiseRejectedResult).reason;
      expect(isFencegateError(reason) && reason.code).toBe('operation_id_conflict');
      const stored = await gate.getOperation(operationId);
      const winner = (fulfilled[0] as PromiseFulfilledResult<CommitResult>).value;
      expect(stored).toEqual(winner);
      const records = [await gate.getRecord(a, 'r'), await gate.getRecord(b, 'r')];
      expect(records.filter((r) => r.exists)).toHaveLength(1);
    }
  });

  it('the same request sent twice at once: applied once, answered once fresh and once replayed', async () => {
    const scope = unique('dup');
    const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const request = {
      scope,
      fence,
      operationId: unique('op'),
      writes: [{ name: 'r', expectRevision: 0, value: 1 }],
    };
    const results = await Promise.all([
      gate.commit(request),
      gate.commit(request),
      gate.commit(request),
    ]);
    expect(results.map((r) => r.outcome)).toEqual(['committed', 'committed', 'committed']);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await gate.getRecord(scope, 'r')).revision).toBe(1);
  });

  it('one effectKey committed from two scopes at once: one commits, the other is duplicate_effect', async () => {
    for (let round = 0; round < 10; round++) {
      const a = unique('effect-a');
      const b = unique('effect-b');
      const ga = await gate.acquire({ scope: a, holder: 'w', ttlMs: 60_000 });
      const gb = await gate.acquire({ scope: b, holder: 'w', ttlMs: 60_000 });
      const effectKey = unique('effect');
      const results = await Promise.all(
        [ga, gb].map((grant) =>
          gate.commit({
            scope: grant.scope,
            fence: grant.fence,
            operationId: unique('op'),
            writes: [{ name: 'r', expectRevision: 0, value: 1 }],
            intents: [{ effectKey, target: 'hook', payload: {} }],
          }),
        ),
      );
      const outcomes = results
        .map((r) => (r.outcome === 'committed' ? 'committed' : r.error.code))
        .sort();
      expect(outcomes).toEqual(['committed', 'duplicate_effect']);
      const intent = await gate.getIntent(effectKey);
      const winner = results.find((r) => r.outcome === 'committed');
      expect(intent?.operationId).toBe(winner?.operationId);
    }
  });

  it('32 writers of one record, each re-reading after a rejection: every increment lands exactly once', async () => {
    const scope = unique('progress');
    const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 600_000 });
    const writers = 32;
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let attempt = 0; ; attempt++) {
          const record = await gate.getRecord(scope, 'n');
          // Every commit gets a definite answer, however many writers race for the row.
          const result = await gate.commit({
            scope,
            fence,
            operationId: `${scope}-${writer}-${attempt}`,
            reads: [{ name: 'n', revision: record.revision }],
            writes: [
              {
                name: 'n',
                expectRevision: record.revision,
                value: ((record.value as number | null) ?? 0) + 1,
              },
            ],
          });
          if (result.outcome === 'committed') return;
          expect(['stale_revision', 'stale_dependency']).toContain(result.error.code);
        }
      }),
    );
    const record = await gate.getRecord(scope, 'n');
    expect(record.value).toBe(writers);
    expect(record.revision).toBe(writers);
  });

  it('a takeover waits for a commit holding the scope row, and the commit is judged at its own fence', async () => {
    const scope = unique('order');
    const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const first = await gate.commit({
      scope,
      fence,
      operationId: unique('op'),
      writes: [{ name: 'r', expectRevision: 0, value: 1 }],
    });
    expect(first.outcome).toBe('committed');
    const inFlight = unique('op');
    const takeover = await withClient(url, async (client) => {
      // The record's row held here: the commit's apply step takes the scope row (locked first),
      // then waits for the record, so it is a commit in flight holding the scope row.
      await client.query('BEGIN');
      await client.query(
        `SELECT 1 FROM ${schema}.records WHERE tenant = 'default' AND scope = $1 AND name = 'r' FOR UPDATE`,
        [scope],
      );
      const commit = gate.commit({
        scope,
        fence,
        operationId: inFlight,
        writes: [{ name: 'r', expectRevision: 1, value: 2 }],
      });
      await untilDatabase(
        async () => (await waitersInApply(url, schema)) >= 1,
        'the commit to wait for the record row',
      );
      const taking = gate.takeover(scope, { holder: 'operator' });
      await untilDatabase(
        async () => (await waitersInApply(url, schema)) >= 2,
        'the takeover to wait for the scope row',
      );
      await client.query('COMMIT');
      const committed = await commit;
      expect(committed.outcome === 'committed' && committed.records).toMatchObject([
        { name: 'r', revision: 2 },
      ]);
      return await taking;
    });
    expect(takeover.fence).toBe(fence + 1);
    expect((await gate.getRecord(scope, 'r')).value).toBe(2);
    const audit = (await gate.audit({ scope })).items.map((e) => [
      e.kind,
      e.outcome,
      e.operationId ?? null,
      e.currentFence,
    ]);
    expect(audit).toEqual([
      ['acquire', 'granted', null, fence],
      ['commit', 'committed', first.operationId, fence],
      ['commit', 'committed', inFlight, fence],
      ['takeover', 'granted', null, fence + 1],
    ]);
  });
});

describe.skipIf(noPostgres)('audit horizon', () => {
  it('readAudit waits for a writer that already holds a seq, so paging never skips an entry', async () => {
    const scope = unique('horizon');
    await withClient(url, async (client) => {
      // An acquire applied by the store's own apply step, in a transaction not yet committed.
      await client.query('BEGIN');
      const grant = await applyInOpenTransaction(client, schema, 'default', clock.now(), (s) =>
        planAcquire(s, { scope, holder: 'w', ttlMs: 60_000 }),
      );
      expect(grant.fence).toBe(1);
      // The acquire above holds a seq but has not committed; a later writer commits first.
      const later = unique('horizon-later');
      await gate.acquire({ scope: later, holder: 'w', ttlMs: 60_000 });
      let answered = false;
      const reading = gate.audit({ limit: 1000 }).then((page) => {
        answered = true;
        return page;
      });
      await untilDatabase(
        () => someoneWaitsIn(url, schema, 'audit_horizon'),
        'readAudit to wait for the in-flight writer',
      );
      expect(answered).toBe(false);
      await client.query('COMMIT');
      const page = await reading;
      const scopes = page.items.map((e) => e.scope);
      expect(scopes).toContain(scope);
      expect(scopes.indexOf(scope)).toBeLessThan(scopes.indexOf(later));
    });
  });
});

describe.skipIf(noPostgres)('tokens', () => {
  it('creates, finds, counts and deletes tokens (not tenant scoped)', async () => {
    const store = gate.store;
    const before = await store.countTokens();
    const token = await store.createToken({
      id: unique('tok'),
      tenant: 'a',
      role: 'operator',
      label: 'ops',
      hash: unique('hash'),
    });
    expect(token.createdAt).toBe(clock.now());
    expect(await store.findToken(token.hash)).toEqual(token);
    expect(await store.countTokens()).toBe(before + 1);
    expect(await store.deleteToken(token.id)).toBe(true);
    expect(await store.deleteToken(token.id)).toBe(false);
    expect(await store.findToken(token.hash)).toBeNull();
  });
});
