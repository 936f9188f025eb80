/**
 * PostgreSQL cases of dispatch, cutovers and the jobs ledger that the every-store suites cannot
 * express: races between concurrent transactions, each decided by the apply step's locks and shown
 * by holding one operation in flight in a transaction of its own (held-transaction.ts, never by
 * timing), concurrent dispatchers on separate pools, the refusal of a schema made before the
 * baseline, and the database clock.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { planCommit } from '../../src/core/plan/plan-commit.js';
import { planCutoverChunk } from '../../src/core/plan/plan-cutover.js';
import { planClaim, planCompletion } from '../../src/core/plan/plan-intents.js';
import { planCancel } from '../../src/core/plan/plan-scope-cancel.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { validateCommit } from '../../src/core/validate.js';
import { validateCutover } from '../../src/core/validate-ops.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry, AuditQuery, CommitRequest, Intent } from '../../src/types.js';
import { HeldTransaction } from './held-transaction.js';
import { dropSchema, pgUrl, testSchema, untilDatabase, withClient } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('dispatch_cutover');
let url: string;
let clock: ManualClock;
let store: PostgresStore;
let gate: Fencegate;

beforeAll(async () => {
  url = pgUrl();
  clock = new ManualClock();
  store = await PostgresStore.open({ url, schema, clock });
  gate = await Fencegate.open({ store });
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
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

async function readAudit(
  query: Omit<AuditQuery, 'limit' | 'afterSeq'> = {},
): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await gate.audit({ ...query, afterSeq, limit: 1000 });
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

/** Commits intents `keys` on a new scope; returns the scope. */
async function commitIntents(keys: string[], target = 'crm'): Promise<string> {
  const scope = unique('wf');
  const grant = await gate.acquire({ scope, holder: 'worker', ttlMs: 3_600_000 });
  const result = await gate.commit({
    scope,
    fence: grant.fence,
    operationId: unique('op'),
    intents: keys.map((effectKey) => ({ effectKey, target, payload: { effectKey } })),
  });
  expect(result.outcome).toBe('committed');
  return scope;
}

/** Runs `work` with an operation held in flight; the transaction never outlives it. */
async function holding<T>(work: (held: HeldTransaction) => Promise<T>): Promise<T> {
  const held = await HeldTransaction.begin(url, schema);
  try {
    return await work(held);
  } finally {
    await held.close();
  }
}

describe.skipIf(noPostgres)('claims', () => {
  it('a claim in flight holds its intents: another dispatcher takes the others, never those', async () => {
    const keys = ['skip-a', 'skip-b', 'skip-c', 'skip-d'];
    await commitIntents(keys, 'skip');
    await holding(async (held) => {
      const taken = await held.apply(
        'default',
        (s) => planClaim(s, { dispatcher: 'held', ttlMs: 30_000, limit: 2, targets: ['skip'] }),
        clock.now(),
      );
      expect(taken.map((i) => i.effectKey)).toEqual(['skip-a', 'skip-b']);
      // The other claim read all four as pending; it waits for the claim holding a and b.
      const other = gate.claimIntents({
        dispatcher: 'other',
        ttlMs: 30_000,
        limit: 10,
        targets: ['skip'],
      });
      await held.untilBlocking('the other claim to wait for the held one');
      await held.commit();
      expect((await other).map((i) => i.effectKey)).toEqual(['skip-c', 'skip-d']);
    });
    const claimed = await Promise.all(keys.map((key) => gate.getIntent(key)));
    expect(claimed.map((i) => [i?.claimedBy, i?.claimFence])).toEqual([
      ['held', 1],
      ['held', 1],
      ['other', 1],
      ['other', 1],
    ]);
  });

  it('a claim takes the next due intents while earlier ones are claimed', async () => {
    const keys = Array.from({ length: 6 }, (_, i) => `next-${i}`);
    await commitIntents(keys, 'next');
    const claim = () =>
      gate.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 3, targets: ['next'] });
    expect((await claim()).map((i) => i.effectKey)).toEqual(keys.slice(0, 3));
    expect((await claim()).map((i) => i.effectKey)).toEqual(keys.slice(3));
  });

  it('four dispatchers on their own pools claim 300 intents together: each exactly once', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `many-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < keys.length; i += 15) await commitIntents(keys.slice(i, i + 15), 'many');
    const pools = await Promise.all(
      [1, 2, 3, 4].map(() => PostgresStore.open({ url, schema, clock, pool: { max: 4 } })),
    );
    try {
      const claims = await Promise.all(
        pools.map(async (pool, d) => {
          const mine: Intent[] = [];
          // Several claims in flight per dispatcher, until nothing is left.
          await Promise.all(
            [0, 1, 2].map(async () => {
              for (;;) {
                const batch = await pool.claimIntents('default', {
                  dispatcher: `d${d}`,
                  ttlMs: 60_000,
                  limit: 7,
                  targets: ['many'],
                });
                if (batch.length === 0) return;
                mine.push(...batch);
              }
            }),
          );
          return mine;
        }),
      );
      const all = claims.flat().map((i) => i.effectKey);
      expect(all).toHaveLength(keys.length);
      expect(new Set(all)).toEqual(new Set(keys));
      expect(claims.flat().every((i) => i.claimFence === 1 && i.attempts === 1)).toBe(true);
      const entries = (await readAudit({ kind: 'intent', outcome: 'claimed' })).filter((e) =>
        e.effectKey?.startsWith('many-'),
      );
      expect(entries).toHaveLength(keys.length);
      for (const entry of entries) {
        const owner = claims.findIndex((c) => c.some((i) => i.effectKey === entry.effectKey));
        expect(entry.holder).toBe(`d${owner}`);
      }
    } finally {
      await Promise.all(pools.map((pool) => pool.close()));
    }
  });

  it('a completion in flight holds the intent: a claim of the expired claim waits, then finds it delivered', async () => {
    await commitIntents(['late-1'], 'late');
    const [claimed] = await gate.claimIntents({
      dispatcher: 'first',
      ttlMs: 1000,
      limit: 1,
      targets: ['late'],
    });
    clock.advance(1000);
    await holding(async (held) => {
      const completed = await held.apply(
        'default',
        (s) =>
          planCompletion(s, 'late-1', {
            claimFence: claimed!.claimFence,
            outcome: 'delivered',
            providerRef: 'ref-1',
          }),
        clock.now(),
      );
      expect(completed.status).toBe('delivered');
      // The claim has expired, so a second dispatcher's claim plans to take it over.
      const second = gate.claimIntents({
        dispatcher: 'second',
        ttlMs: 1000,
        limit: 1,
        targets: ['late'],
      });
      await held.untilBlocking('the claim to wait for the completion');
      await held.commit();
      expect(await second).toEqual([]);
    });
    // Committed delivered: nothing is due any more, and the first claim's outcome stands.
    expect(
      await gate.claimIntents({ dispatcher: 'second', ttlMs: 1000, limit: 1, targets: ['late'] }),
    ).toEqual([]);
    expect(await gate.getIntent('late-1')).toMatchObject({
      status: 'delivered',
      claimFence: 1,
      providerRef: 'ref-1',
    });
    const audit = (await readAudit({ kind: 'intent' }))
      .filter((e) => e.effectKey === 'late-1')
      .map((e) => `${e.outcome} ${e.holder ?? ''}`.trim());
    expect(audit).toEqual(['pending', 'claimed first', 'delivered first']);
  });

  it('cancel waits for a claim in flight, then finds nothing pending', async () => {
    const scope = await commitIntents(['race-1'], 'race');
    await holding(async (held) => {
      await held.apply(
        'default',
        (s) => planClaim(s, { dispatcher: 'd', ttlMs: 30_000, limit: 1, targets: ['race'] }),
        clock.now(),
      );
      const cancelling = gate.cancel(scope);
      await held.untilBlocking('the cancel to wait for the intent row');
      await held.commit();
      expect(await cancelling).toMatchObject({ cancelledIntents: 0 });
    });
    expect(await gate.getIntent('race-1')).toMatchObject({ status: 'claimed', claimedBy: 'd' });
    const audit = (await gate.audit({ scope })).items.map((e) => `${e.kind} ${e.outcome}`);
    expect(audit).toEqual([
      'acquire granted',
      'commit committed',
      'intent pending',
      'intent claimed',
      'cancel ok',
    ]);
  });

  it('a claim waits for a cancel in flight holding an intent, and finds it cancelled afterwards', async () => {
    const scope = await commitIntents(['race-2'], 'race2');
    await holding(async (held) => {
      expect(
        await held.apply('default', (s) => planCancel(s, scope, undefined), clock.now()),
      ).toMatchObject({ cancelledIntents: 1 });
      const claiming = gate.claimIntents({
        dispatcher: 'd',
        ttlMs: 1000,
        limit: 5,
        targets: ['race2'],
      });
      await held.untilBlocking('the claim to wait for the cancel');
      await held.commit();
      expect(await claiming).toEqual([]);
    });
    expect(
      await gate.claimIntents({ dispatcher: 'd', ttlMs: 1000, limit: 5, targets: ['race2'] }),
    ).toEqual([]);
    expect(await gate.getIntent('race-2')).toMatchObject({ status: 'cancelled', attempts: 0 });
  });

  it('claims by the database clock when no clock is injected, whatever the process clock says', async () => {
    // This process's clock runs an hour behind the database's: leases must not follow it.
    const behind = 3_600_000;
    const realNow = Date.now.bind(Date);
    const skew = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - behind);
    const plain = await PostgresStore.open({ url, schema });
    try {
      const scope = unique('dbclock');
      const grant = await plain.acquire('clock', { scope, holder: 'w', ttlMs: 60_000 });
      await plain.commit('clock', {
        scope,
        fence: grant.fence,
        operationId: unique('op'),
        reads: [],
        writes: [],
        intents: [{ effectKey: 'clock-1', target: 't', payload: {} }],
      });
      const before = await plain.now();
      const [first] = await plain.claimIntents('clock', { dispatcher: 'd', ttlMs: 300, limit: 1 });
      const after = await plain.now();
      // Store time is the database clock as the plan estimated it: never ahead of it, and within
      // the apply step's tolerance (1 s) of the clock it read under its locks.
      expect(first!.claimExpiresAt! - 300).toBeLessThanOrEqual(after);
      expect(first!.claimExpiresAt! - 300).toBeGreaterThanOrEqual(before - 1_000);
      // Once the database clock passes the expiry, the claim is taken over: by the process clock
      // it would not expire for another hour.
      // A plan runs at an estimate of the database clock, up to the apply step's tolerance behind
      // it; a claim that finds nothing due applies nothing, so it is answered at that estimate.
      await untilDatabase(
        async () => (await plain.now()) > first!.claimExpiresAt! + 1_000,
        'the database clock to pass the claim expiry by the plan tolerance',
      );
      const [second] = await plain.claimIntents('clock', { dispatcher: 'e', ttlMs: 300, limit: 1 });
      expect(second).toMatchObject({ effectKey: 'clock-1', claimedBy: 'e', claimFence: 2 });
      expect(second!.claimExpiresAt! - 300).toBeGreaterThan(first!.claimExpiresAt!);
    } finally {
      skew.mockRestore();
      await plain.close();
    }
  });
});

describe.skipIf(noPostgres)('cutovers', () => {
  function scopesOf(prefix: string, count: number): string[] {
    return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
  }

  async function pinToV7(scopes: string[]): Promise<void> {
    for (const scope of scopes) {
      await gate.acquire({ scope, holder: 'v7-worker', ttlMs: 3_600_000, policyVersion: 'v7' });
    }
  }

  it('two callers resuming one cutover at once: the second waits for the chunk in flight, then moves the rest; each scope once', async () => {
    const scopes = scopesOf(unique('both'), 10);
    await pinToV7(scopes);
    const cutoverId = unique('both-cutover');
    const request = { cutoverId, toPolicy: 'v8', holder: 'controller-v8', scopes };
    // The first caller planned the cutover and moved a chunk of 4; its next chunk is in flight.
    await store.startCutover('default', { ...validateCutover(request, DEFAULT_LIMITS), cutoverId });
    const chunkOf4 = (held: HeldTransaction) =>
      held.apply('default', (s) => planCutoverChunk(s, cutoverId, 4), clock.now(), [
        { type: 'cutover', cutoverId },
      ]);
    await holding(async (held) => {
      expect(await chunkOf4(held)).toBe(4);
      await held.commit();
    });
    await holding(async (held) => {
      expect(await chunkOf4(held)).toBe(4);
      const resumed = gate.cutover(request);
      await held.untilBlocking('the resume to wait for the chunk');
      await held.commit();
      const result = await resumed;
      expect(result.fences).toEqual(scopes.map((scope) => ({ scope, fence: 2 })));
    });
    const entries = (await readAudit({ kind: 'cutover' })).filter((e) => e.reason === cutoverId);
    expect(entries.map((e) => e.scope)).toEqual(scopes);
    expect(await gate.cutoverReport(cutoverId)).toMatchObject({
      status: 'completed',
      scopes: 10,
    });
  });

  it('a cutover waits for a commit in flight on one of its scopes; the commit lands first, a later stale one is refused', async () => {
    const scopes = scopesOf(unique('held'), 3);
    await pinToV7(scopes);
    const target = scopes[1]!;
    const fence = (await gate.getScope(target))!.fence;
    const cutoverId = unique('held-cutover');
    await holding(async (held) => {
      const commit = validateCommit({
        scope: target,
        fence,
        operationId: unique('v7-op'),
        policyVersion: 'v7',
        writes: [{ name: 'memory', expectRevision: 0, value: 1 }],
      });
      const answer = await held.apply('default', (s) => planCommit(s, commit), clock.now());
      expect(answer.outcome).toBe('committed');
      const cutover = gate.cutover({ cutoverId, toPolicy: 'v8', holder: 'ctl', scopes });
      await held.untilBlocking('the cutover to wait for the commit');
      await held.commit();
      expect((await cutover).fences.map((f) => f.fence)).toEqual([2, 2, 2]);
    });
    const late: CommitRequest = {
      scope: target,
      fence,
      operationId: unique('v7-late'),
      policyVersion: 'v7',
      writes: [{ name: 'memory', expectRevision: 1, value: 2 }],
    };
    expect(await gate.commit(late)).toMatchObject({
      outcome: 'rejected',
      error: { code: 'stale_fence', details: { currentFence: 2 } },
    });
    expect(await gate.getRecord(target, 'memory')).toMatchObject({ revision: 1, value: 1 });
    const audit = (await gate.audit({ scope: target })).items.map(
      (e) => `${e.kind} ${e.outcome} ${e.currentFence}`,
    );
    expect(audit).toEqual([
      'acquire granted 1',
      'commit committed 1',
      'cutover granted 2',
      'commit rejected 2',
    ]);
    expect(await gate.cutoverReport(cutoverId)).toMatchObject({
      staleAttempts: 1,
      staleAccepted: 0,
    });
  });

  it('commits racing a 3,000-scope cutover: each is either before its scope moved or refused', async () => {
    const prefix = unique('racing');
    const scopes = Array.from({ length: 3000 }, (_, i) => `${prefix}-${i}`);
    for (let i = 0; i < scopes.length; i += 500) {
      await Promise.all(
        scopes
          .slice(i, i + 500)
          .map((scope) =>
            gate.acquire({ scope, holder: 'v7', ttlMs: 3_600_000, policyVersion: 'v7' }),
          ),
      );
    }
    const cutoverId = unique('racing-cutover');
    // 300 commits queue for 6 connections: on a loaded machine the last waits longer for one than
    // the default 5 s, which would refuse it store_unavailable before it ever raced.
    const writers = await PostgresStore.open({
      url,
      schema,
      clock,
      pool: { max: 6, connectionTimeoutMillis: 60_000 },
    });
    try {
      const racing = scopes.filter((_, i) => i % 10 === 0);
      const [, results] = await Promise.all([
        gate.cutover({ cutoverId, toPolicy: 'v8', holder: 'ctl', scopes }),
        Promise.all(
          racing.map((scope) =>
            writers.commit('default', {
              scope,
              fence: 1,
              operationId: `${cutoverId}-${scope}`,
              policyVersion: 'v7',
              reads: [],
              writes: [],
              intents: [],
            }),
          ),
        ),
      ]);
      const audit = await readAudit();
      const movedAt = new Map(
        audit.filter((e) => e.kind === 'cutover').map((e) => [e.scope, e.seq] as const),
      );
      racing.forEach((scope, i) => {
        const entry = audit.find((e) => e.kind === 'commit' && e.scope === scope)!;
        const before = entry.seq < movedAt.get(scope)!;
        expect(results[i]!.outcome).toBe(before ? 'committed' : 'rejected');
        expect(entry.outcome).toBe(before ? 'committed' : 'rejected');
      });
      expect(await gate.cutoverReport(cutoverId)).toMatchObject({
        status: 'completed',
        scopes: 3000,
        staleAccepted: 0,
      });
      expect((await verifyStore(store, { tenant: 'default' })).ok).toBe(true);
    } finally {
      await writers.close();
    }
  });
});

describe.skipIf(noPostgres)('jobs ledger', () => {
  it('of several events of one job in one call, the latest wins, equally late ones the last sent', async () => {
    const scope = unique('jobs');
    const event = (state: 'queued' | 'reserved' | 'running' | 'failed', at?: number) => ({
      jobId: `${scope}-job`,
      scope,
      policyVersion: 'v7',
      fence: 1,
      state,
      attempt: 1,
      ...(at === undefined ? {} : { at }),
    });
    await gate.recordJobEvents([event('queued', 10), event('running', 30), event('reserved', 20)]);
    expect((await store.listJobs('default', [scope]))[0]).toMatchObject({ state: 'running' });
    await gate.recordJobEvents([event('failed', 30), event('queued', 5)]);
    expect((await store.listJobs('default', [scope]))[0]).toMatchObject({
      state: 'failed',
      at: 30,
    });
    // Without `at`, an event is stamped with store time.
    await gate.recordJobEvents([event('reserved')]);
    expect((await store.listJobs('default', [scope]))[0]).toMatchObject({
      state: 'reserved',
      at: clock.now(),
    });
  });
});

/** What opening the store on `schema` threw (undefined when it opened). */
async function refusalOfOpening(schema: string): Promise<unknown> {
  return PostgresStore.open({ url, schema, clock }).then(
    (store) => store.close().then(() => undefined),
    (caught: unknown) => caught,
  );
}

describe.skipIf(noPostgres)('a schema made before the baseline', () => {
  it('is refused with its version and what to do, and left as it is', async () => {
    const old = testSchema('pre_release');
    try {
      await withClient(url, async (client) => {
        await client.query(`CREATE SCHEMA ${old}`);
        await client.query(
          `CREATE TABLE ${old}.migrations (version integer PRIMARY KEY, name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        await client.query(
          `INSERT INTO ${old}.migrations (version, name) SELECT v, 'step ' || v FROM generate_series(1, 23) v`,
        );
      });
      const error = await refusalOfOpening(old);
      expect(error).toMatchObject({ code: 'store_unavailable' });
      expect((error as Error).message).toMatch(
        new RegExp(
          `schema ${old} was made by a pre-release fencegate \\(version 23 .*DROP SCHEMA ${old} CASCADE`,
        ),
      );
      const tables = await withClient(url, async (client) =>
        (
          await client.query<{ name: string }>(
            `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1`,
            [old],
          )
        ).rows.map((row) => row.name),
      );
      expect(tables).toEqual(['migrations']);
    } finally {
      await dropSchema(url, old);
    }
  });

  it('a version 1 whose functions decided in SQL is refused too, with what to do', async () => {
    const old = testSchema('decided_in_sql');
    try {
      await withClient(url, async (client) => {
        await client.query(`CREATE SCHEMA ${old}`);
        await client.query(
          `CREATE TABLE ${old}.schema_versions (version integer PRIMARY KEY, name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now())`,
        );
        await client.query(`INSERT INTO ${old}.schema_versions VALUES (1, 'baseline', now())`);
        await client.query(
          `CREATE FUNCTION ${old}.commit_under_lock(text, jsonb, bigint, text) RETURNS jsonb
             LANGUAGE sql AS $$ SELECT '{}'::jsonb $$`,
        );
      });
      const error = await refusalOfOpening(old);
      expect(error).toMatchObject({ code: 'store_unavailable' });
      expect((error as Error).message).toMatch(
        new RegExp(`schema ${old} was made by a pre-release .*DROP SCHEMA ${old} CASCADE`),
      );
    } finally {
      await dropSchema(url, old);
    }
  });
  it('a version 1 made from a different text (an earlier pre-release build) is refused', async () => {
    const earlier = testSchema('earlier_build');
    try {
      const store = await PostgresStore.open({ url, schema: earlier, clock });
      await store.close();
      // What an earlier build left: the same version number over a different text of it, here an
      // apply step that knows another payload.
      await withClient(url, async (client) => {
        await client.query(
          `UPDATE ${earlier}.schema_versions SET digest = 'an earlier text' WHERE version = 1`,
        );
      });
      const error = await refusalOfOpening(earlier);
      expect(error).toMatchObject({ code: 'store_unavailable' });
      expect((error as Error).message).toMatch(
        new RegExp(
          `schema ${earlier} was made by another pre-release build .*version 1.*DROP SCHEMA ${earlier} CASCADE`,
        ),
      );
      // A schema whose versions carry no digest at all is such a build too.
      await withClient(url, async (client) => {
        await client.query(`ALTER TABLE ${earlier}.schema_versions DROP COLUMN digest`);
      });
      const undigested = await refusalOfOpening(earlier);
      expect(undigested).toMatchObject({ code: 'store_unavailable' });
      // The same text opens again, and nothing was changed by the refusals.
      await withClient(url, async (client) => {
        await client.query(`DROP SCHEMA ${earlier} CASCADE`);
      });
      const again = await PostgresStore.open({ url, schema: earlier, clock });
      await again.close();
      const reopened = await PostgresStore.open({ url, schema: earlier, clock });
      await reopened.close();
    } finally {
      await dropSchema(url, earlier);
    }
  });
});
