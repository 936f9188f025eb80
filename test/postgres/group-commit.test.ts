/**
 * Group commit on PostgreSQL: commits queued while the batch slot is busy go to the database as
 * one transaction (checked through their audit entries' xmin) unless one writes a row another
 * reads or writes; such a commit waits for a later batch, so each still gets the answer it would get
 * alone, in call order: replays, operationId conflicts, duplicate effect keys, stale revisions and
 * cross-scope dependencies. Two batching stores on overlapping scopes never deadlock, and a batch
 * whose reply is lost answers outcome_unknown for each of its commits.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/canonical.js';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitRequest, CommitResult } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { TcpProxy } from './tcp-proxy.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('group');
const clock = new ManualClock();
let url: string;
let gate: Fencegate;
let admin: pg.Pool;

beforeAll(async () => {
  url = pgUrl();
  // One batch in flight: whatever arrives while it runs forms the next batch.
  gate = await Fencegate.open({
    store: await PostgresStore.open({
      url,
      schema,
      clock,
      groupCommit: { maxBatches: 1 },
      pool: { max: 4 },
    }),
  });
  admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
});

afterAll(async () => {
  await gate.close();
  await admin.end();
  await dropSchema(url, schema);
});

let n = 0;
async function grant(prefix: string): Promise<{ scope: string; fence: number }> {
  n += 1;
  const scope = `${prefix}-${n}`;
  const { fence } = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
  return { scope, fence };
}

function settle(request: CommitRequest): Promise<CommitResult | string> {
  return gate
    .commit(request)
    .catch((error: unknown) => (isFencegateError(error) ? error.code : String(error)));
}

/** How many transactions wrote the commits' audit entries (distinct xmin). */
async function transactionsOf(operationIds: string[]): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS n FROM ${schema}.audit WHERE kind = 'commit' AND operation_id = ANY($1)`,
    [operationIds],
  );
  return rows[0]?.n ?? 0;
}

function summary(answer: CommitResult | string): string {
  if (typeof answer === 'string') return answer;
  if (answer.outcome === 'rejected') return answer.error.code;
  return answer.replayed ? 'replayed' : 'committed';
}

describe.skipIf(noPostgres)('group commit', () => {
  it('answers each queued commit as if it ran alone, in call order', async () => {
    const a = await grant('batch');
    const b = await grant('batch');
    const write = (
      scope: { scope: string; fence: number },
      operationId: string,
      expectRevision: number,
      extra = {},
    ) => ({
      scope: scope.scope,
      fence: scope.fence,
      operationId,
      writes: [{ name: 'r', expectRevision, value: operationId }],
      ...extra,
    });
    const blocker = write(b, `blk-${n}`, 0);
    const requests: CommitRequest[] = [
      write(a, `one-${n}`, 0, { intents: [{ effectKey: `fx-${n}`, target: 't', payload: 1 }] }),
      write(a, `one-${n}`, 0, { intents: [{ effectKey: `fx-${n}`, target: 't', payload: 1 }] }),
      write(a, `one-${n}`, 5),
      write(a, `two-${n}`, 0),
      write(a, `three-${n}`, 1, { intents: [{ effectKey: `fx-${n}`, target: 't', payload: 2 }] }),
      write({ scope: a.scope, fence: a.fence - 1 }, `stale-${n}`, 1),
      {
        scope: b.scope,
        fence: b.fence,
        operationId: `dep-${n}`,
        reads: [{ scope: a.scope, name: 'r', revision: 1 }],
        writes: [{ name: 'r', expectRevision: 1, value: 'dep' }],
      },
    ];
    // The blocker takes the only batch slot; everything sent meanwhile forms one batch.
    const answers = await Promise.all([settle(blocker), ...requests.map(settle)]);
    expect(answers.map(summary)).toEqual([
      'committed',
      'committed',
      'replayed',
      'operation_id_conflict',
      'stale_revision',
      'duplicate_effect',
      'stale_fence',
      'committed',
    ]);
    // Each later answer depends on the first commit, so it was applied after it: a commit that
    // reads a row another member writes waits for a later batch. Two and three only read scope a's
    // row and the record (each is refused, writing nothing there), so they share one transaction,
    // in call order; the operationId conflict may land between them. Stale is decided by scope a's
    // row alone (its fence is below the current one), so it may go in an earlier transaction.
    const onA = (await gate.audit({ scope: a.scope, kind: 'commit' })).items.map((e) =>
      `${e.operationId} ${e.outcome} ${e.reason ?? ''}`.trim(),
    );
    expect(onA[0]).toBe(`one-${n} committed`);
    expect(onA.filter((e) => e.startsWith(`two-${n}`) || e.startsWith(`three-${n}`))).toEqual([
      `two-${n} rejected stale_revision`,
      `three-${n} rejected duplicate_effect`,
    ]);
    expect(onA).toContain(`stale-${n} rejected stale_fence`);
    expect(onA).toContain(`one-${n} rejected operation_id_conflict`);
    expect(onA).toHaveLength(5);
    expect(await transactionsOf([`two-${n}`, `three-${n}`])).toBe(1);
    expect((await gate.getRecord(a.scope, 'r')).value).toBe(`one-${n}`);
    expect((await gate.getRecord(b.scope, 'r')).value).toBe('dep');
  });

  it('commits that share no row, queued together, go to the database as one transaction', async () => {
    const blocker = await grant('disjoint');
    const scopes = await Promise.all(Array.from({ length: 5 }, () => grant('disjoint')));
    const ids = scopes.map((_, i) => `disjoint-${n}-${i}`);
    // The blocker takes the only batch slot; the five wait for it together.
    const answers = await Promise.all([
      settle({
        scope: blocker.scope,
        fence: blocker.fence,
        operationId: `disjoint-blk-${n}`,
        writes: [{ name: 'r', expectRevision: 0, value: 0 }],
      }),
      ...scopes.map((scope, i) =>
        settle({
          scope: scope.scope,
          fence: scope.fence,
          operationId: ids[i]!,
          writes: [{ name: 'r', expectRevision: 0, value: i }],
        }),
      ),
    ]);
    expect(answers.map(summary)).toEqual(Array.from({ length: 6 }, () => 'committed'));
    expect(await transactionsOf(ids)).toBe(1);
    expect(await transactionsOf([`disjoint-blk-${n}`, ...ids])).toBe(2);
    for (const [i, scope] of scopes.entries()) {
      expect(await gate.getRecord(scope.scope, 'r')).toMatchObject({ revision: 1, value: i });
    }
  });

  it('acquires of new scopes, queued together, go to the database as one transaction', async () => {
    // Each reads the tenant's active rollouts (none); rows that members only read do not keep
    // them apart, only a row one of them writes.
    const blocker = `acq-blk-${n}`;
    const scopes = Array.from({ length: 5 }, (_, i) => `acq-${n}-${i}`);
    await Promise.all(
      [blocker, ...scopes].map((scope) => gate.acquire({ scope, holder: 'w', ttlMs: 60_000 })),
    );
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM ${schema}.audit WHERE kind = 'acquire' AND scope = ANY($1)`,
      [scopes],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('stores a queued commit value and payload as they were at the call', async () => {
    const a = await grant('snap');
    const b = await grant('snap');
    const value = { step: 1 };
    const payload = { to: 'x' };
    // The blocker takes the only batch slot, so the second commit waits in the queue.
    const blocker = settle({
      scope: b.scope,
      fence: b.fence,
      operationId: `snap-blk-${n}`,
      writes: [{ name: 'r', expectRevision: 0, value: 0 }],
    });
    const queued = settle({
      scope: a.scope,
      fence: a.fence,
      operationId: `snap-${n}`,
      writes: [{ name: 'r', expectRevision: 0, value }],
      intents: [{ effectKey: `snap-fx-${n}`, target: 't', payload }],
    });
    value.step = 2;
    payload.to = 'y';
    expect((await Promise.all([blocker, queued])).map(summary)).toEqual(['committed', 'committed']);
    expect(await gate.getRecord(a.scope, 'r')).toMatchObject({
      value: { step: 1 },
      fingerprint: fingerprint({ step: 1 }),
    });
    expect((await gate.getIntent(`snap-fx-${n}`))?.payload).toEqual({ to: 'x' });
  });

  it('judges cross-scope dependencies of queued commits in call order', async () => {
    const a = await grant('cross');
    const b = await grant('cross');
    const blocker = await grant('cross');
    const answers = await Promise.all([
      settle({
        scope: blocker.scope,
        fence: blocker.fence,
        operationId: `cb-${n}`,
        writes: [{ name: 'r', expectRevision: 0, value: 0 }],
      }),
      settle({
        scope: b.scope,
        fence: b.fence,
        operationId: `cx-${n}`,
        reads: [{ scope: a.scope, name: 'r', revision: 0 }],
        writes: [{ name: 'r', expectRevision: 0, value: 'b' }],
      }),
      settle({
        scope: a.scope,
        fence: a.fence,
        operationId: `cy-${n}`,
        reads: [{ scope: b.scope, name: 'r', revision: 0 }],
        writes: [{ name: 'r', expectRevision: 0, value: 'a' }],
      }),
    ]);
    // Each reads the record the other writes: b's commit, sent first, lands; a's then finds its
    // dependency moved. Never both (that would be write skew).
    expect(answers.map(summary)).toEqual(['committed', 'committed', 'stale_dependency']);
    expect(await gate.getRecord(b.scope, 'r')).toMatchObject({ revision: 1, value: 'b' });
    expect((await gate.getRecord(a.scope, 'r')).revision).toBe(0);
  });

  it('two batching stores on overlapping scopes with cross reads settle every commit', async () => {
    const other = await Fencegate.open({
      store: await PostgresStore.open({
        url,
        schema,
        clock,
        groupCommit: { maxBatches: 2 },
        pool: { max: 4 },
      }),
    });
    try {
      const scopes = await Promise.all(Array.from({ length: 6 }, () => grant('overlap')));
      let op = 0;
      const worker = async (handle: Fencegate, seed: number): Promise<number> => {
        let committed = 0;
        for (let i = 0; i < 60; i++) {
          const target = scopes[(seed + i) % scopes.length] as { scope: string; fence: number };
          const dependency = scopes[(seed + i * 5 + 1) % scopes.length] as {
            scope: string;
            fence: number;
          };
          const [current, read] = await Promise.all([
            handle.getRecord(target.scope, 'n'),
            handle.getRecord(dependency.scope, 'n'),
          ]);
          op += 1;
          const result = await handle.commit({
            scope: target.scope,
            fence: target.fence,
            operationId: `overlap-${seed}-${op}`,
            reads: [{ scope: dependency.scope, name: 'n', revision: read.revision }],
            writes: [{ name: 'n', expectRevision: current.revision, value: current.revision + 1 }],
          });
          if (result.outcome === 'committed') committed += 1;
        }
        return committed;
      };
      const counts = await Promise.all(
        [0, 1, 2, 3].map((seed) => worker(seed % 2 === 0 ? gate : other, seed)),
      );
      const total = counts.reduce((x, y) => x + y, 0);
      let revisions = 0;
      for (const scope of scopes) revisions += (await gate.getRecord(scope.scope, 'n')).revision;
      expect(revisions).toBe(total);
      expect(total).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it('a batch whose reply is lost answers outcome_unknown for each commit; each is then found committed', async () => {
    const target = new URL(url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    const proxied = await Fencegate.open({
      store: await PostgresStore.open({
        url: target.toString(),
        schema,
        clock,
        groupCommit: { maxBatches: 1 },
        pool: { max: 1 },
      }),
    });
    const holder = await admin.connect();
    try {
      // Granted through the proxied store, so it plans on rows it knows: each commit's first
      // apply holds, and the statement whose reply is lost is the one that commits.
      const scopes = await Promise.all(
        Array.from({ length: 4 }, async () => {
          n += 1;
          const scope = `lost-${n}`;
          const { fence } = await proxied.acquire({ scope, holder: 'w', ttlMs: 60_000 });
          return { scope, fence };
        }),
      );
      const [first, ...rest] = scopes as [
        { scope: string; fence: number },
        ...{ scope: string; fence: number }[],
      ];
      await proxied.getScope(first.scope);
      // Hold the first scope's row so the blocker commit waits inside the database.
      await holder.query('BEGIN');
      await holder.query(`SELECT ${schema}.assert_fence($1, $2, $3, $4)`, [
        'default',
        first.scope,
        first.fence,
        clock.now(),
      ]);
      const blocker = proxied.commit({
        scope: first.scope,
        fence: first.fence,
        operationId: `lb-${n}`,
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
      });
      await waitForLockWait();
      const batch = rest.map((scope, i) =>
        proxied
          .commit({
            scope: scope.scope,
            fence: scope.fence,
            operationId: `lost-${n}-${i}`,
            writes: [{ name: 'r', expectRevision: 0, value: i }],
          })
          .catch((error: unknown) => error),
      );
      const cut = proxy.cutAfterNextReply();
      await holder.query('COMMIT');
      expect(summary(await blocker)).toBe('committed');
      const errors = await Promise.all(batch);
      await cut;
      errors.forEach((error, i) => {
        expect(isFencegateError(error) && error.code).toBe('outcome_unknown');
        expect(error).toMatchObject({ details: { operationId: `lost-${n}-${i}` } });
      });
      for (let i = 0; i < rest.length; i++) {
        expect(await proxied.getOperation(`lost-${n}-${i}`)).toMatchObject({
          outcome: 'committed',
        });
      }
      expect(await transactionsOf(rest.map((_, i) => `lost-${n}-${i}`))).toBe(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      await proxied.close();
      await proxy.stop();
    }

    async function waitForLockWait(): Promise<void> {
      for (let i = 0; i < 2000; i++) {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
          [`${schema}.apply(`],
        );
        if ((rows[0]?.n ?? 0) > 0) return;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error('the blocker never waited');
    }
  });
});
