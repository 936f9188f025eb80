/**
 * What happens on PostgreSQL while a call waits for a row lock:
 * - store time is the database clock once the locks are held: a commit (or assert_fence) that
 *   waited past its lease's expiry is judged by the time it got the lock, not the time it arrived,
 *   and rejected lease_expired; a write that waited longer than the clock tolerance writes times
 *   (audit entries) of the database clock after its wait, not of its arrival;
 * - an operation abandoned while its commit waits is never applied: the commit, once it gets the
 *   lock, is answered the abandonment. In every order, abandon's answer and the store agree.
 * The stores here run on the database clock (no injected clock), as in production.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { assertFence } from '../../src/store/postgres/assert-fence.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { expectAgreement } from '../helpers/abandon-agreement.js';
import {
  dropSchema,
  pgUrl,
  someoneWaitsIn,
  testSchema,
  untilDatabase,
  withClient,
} from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('after_locks');
let url: string;
let gate: Fencegate;
let batching: Fencegate;
let holder: pg.Client;

beforeAll(async () => {
  url = pgUrl();
  gate = await Fencegate.open({ store: await PostgresStore.open({ url, schema }) });
  batching = await Fencegate.open({
    store: await PostgresStore.open({ url, schema, groupCommit: { maxBatches: 1 } }),
  });
  holder = new pg.Client({ connectionString: url });
  holder.on('error', () => undefined);
  await holder.connect();
});

afterAll(async () => {
  await gate.close();
  await batching.close();
  await holder.end();
  await dropSchema(url, schema);
});

let n = 0;
function scopeName(label: string): string {
  n += 1;
  return `${label}-${n}`;
}

async function databaseNow(): Promise<number> {
  const { rows } = await holder.query<{ now: string }>(`SELECT ${schema}.db_now() AS now`);
  return Number(rows[0]?.now);
}

/**
 * Holds the scope row FOR SHARE (a caller's own transaction through assert_fence). A refusal rolls
 * the holder's transaction back, so it cannot leave the next test an aborted transaction.
 */
async function holdScope(scope: string, fence: number): Promise<() => Promise<void>> {
  await holder.query('BEGIN');
  try {
    await assertFence(holder, { tenant: 'default', scope, fence, schema });
  } catch (error) {
    await holder.query('ROLLBACK');
    throw error;
  }
  return async () => {
    await holder.query('COMMIT');
  };
}

describe.skipIf(noPostgres)('store time after the locks', () => {
  it('rejects lease_expired a commit that waited for the scope lock past its lease', async () => {
    const scope = scopeName('late');
    // Long enough that the lease is still live when the holder's assert_fence runs, on a loaded
    // machine too; the test then waits for it to expire by database time.
    const grant = await gate.acquire({ scope, holder: 'w', ttlMs: 1_500 });
    const release = await holdScope(scope, grant.fence);
    const pending = gate.commit({
      scope,
      fence: grant.fence,
      operationId: `late-${n}`,
      writes: [{ name: 'r', expectRevision: 0, value: 'after expiry' }],
    });
    await untilDatabase(
      () => someoneWaitsIn(url, schema, 'apply'),
      'the commit to wait for the scope lock',
    );
    await untilDatabase(
      async () => (await databaseNow()) > grant.leaseExpiresAt!,
      'the lease to expire by database time',
    );
    await release();
    const result = await pending;
    expect(result.outcome === 'rejected' && result.error.code).toBe('lease_expired');
    expect((await gate.getRecord(scope, 'r')).exists).toBe(false);
    const entry = (await gate.audit({ kind: 'commit' })).items.find(
      (e) => e.operationId === `late-${n}`,
    );
    expect(entry?.at).toBeGreaterThanOrEqual(grant.leaseExpiresAt!);
  });

  it('answers lease_expired to an assert_fence that waited for the scope lock past the lease', async () => {
    const scope = scopeName('fence');
    const grant = await gate.acquire({ scope, holder: 'w', ttlMs: 300 });
    await holder.query('BEGIN');
    await holder.query(
      `SELECT 1 FROM ${schema}.scopes WHERE tenant = 'default' AND scope = $1 FOR NO KEY UPDATE`,
      [scope],
    );
    const checking = withClient(url, async (client) => {
      await client.query('BEGIN');
      try {
        await assertFence(client, { tenant: 'default', scope, fence: grant.fence, schema });
        return 'ok';
      } catch (error) {
        return (error as { code?: string }).code;
      } finally {
        await client.query('ROLLBACK');
      }
    });
    await untilDatabase(
      () => someoneWaitsIn(url, schema, 'assert_fence'),
      'assert_fence to wait for the scope lock',
    );
    await untilDatabase(
      async () => (await databaseNow()) > grant.leaseExpiresAt!,
      'the lease to expire by database time',
    );
    await holder.query('COMMIT');
    expect(await checking).toBe('lease_expired');
  });
});

/**
 * How far the time a plan runs at may be from the database clock (docs/postgres.md): a write that
 * waited for its locks longer than this is planned again at the database time after its wait.
 */
const CLOCK_TOLERANCE_MS = 1_000;

/**
 * Waits until database time is more than the clock tolerance past the moment a call was seen
 * waiting; returns the database time then (the call gets its lock only after it).
 */
async function timePassesWhileWaiting(): Promise<number> {
  const seenWaiting = await databaseNow();
  await untilDatabase(
    async () => (await databaseNow()) > seenWaiting + CLOCK_TOLERANCE_MS,
    'database time to pass the clock tolerance',
  );
  return await databaseNow();
}

describe.skipIf(noPostgres)('store time after the locks of completions and cutover steps', () => {
  it('audits a completion that waited for the intent row at the database time it got the lock', async () => {
    const scope = scopeName('complete');
    const grant = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const effectKey = `complete-${n}`;
    await gate.commit({
      scope,
      fence: grant.fence,
      operationId: effectKey,
      intents: [{ effectKey, target: 'crm', payload: {} }],
    });
    const [claimed] = await gate.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 100 });
    expect(claimed?.effectKey).toBe(effectKey);
    await holder.query('BEGIN');
    await holder.query(
      `SELECT 1 FROM ${schema}.intents WHERE tenant = 'default' AND effect_key = $1 FOR UPDATE`,
      [effectKey],
    );
    const pending = gate.completeIntent(effectKey, {
      claimFence: claimed!.claimFence,
      outcome: 'delivered',
    });
    await untilDatabase(
      () => someoneWaitsIn(url, schema, 'apply'),
      'the completion to wait for the intent row lock',
    );
    const released = await timePassesWhileWaiting();
    await holder.query('COMMIT');
    expect((await pending).status).toBe('delivered');
    const answered = await databaseNow();
    const entry = (await gate.audit({ kind: 'intent' })).items.find(
      (e) => e.effectKey === effectKey && e.outcome === 'delivered',
    );
    expect(entry?.at).toBeGreaterThanOrEqual(released);
    // A completion refused for waiting past the tolerance plans its next round at the time its
    // apply is expected to run (docs/postgres.md), so its time may lead the database clock by
    // less than the tolerance when that apply runs sooner.
    expect(entry?.at).toBeLessThan(answered + CLOCK_TOLERANCE_MS);
  });

  it('grants a cutover step that waited for the scope lock at the database time it got the lock', async () => {
    const scope = scopeName('cutover');
    const grant = await gate.acquire({ scope, holder: 'w', ttlMs: 60_000 });
    await gate.registerPolicy({ version: `v-${n}` });
    const release = await holdScope(scope, grant.fence);
    const pending = gate.cutover({ toPolicy: `v-${n}`, holder: 'controller', scopes: [scope] });
    await untilDatabase(
      () => someoneWaitsIn(url, schema, 'apply'),
      'the cutover step to wait for the scope lock',
    );
    const released = await timePassesWhileWaiting();
    await release();
    expect((await pending).fences).toEqual([{ scope, fence: grant.fence + 1 }]);
    const answered = await databaseNow();
    const entry = (await gate.audit({ kind: 'cutover' })).items.find(
      (e) => e.scope === scope && e.outcome === 'granted',
    );
    expect(entry?.at).toBeGreaterThanOrEqual(released);
    // As above: a step refused for its wait plans again at the time its apply is expected.
    expect(entry?.at).toBeLessThan(answered + CLOCK_TOLERANCE_MS);
  });
});

describe.skipIf(noPostgres).each([
  ['one at a time', () => gate],
  ['group commit', () => batching],
])('abandonOperation against a commit in flight (%s)', (_label, client) => {
  it('a commit waiting for the scope lock while its operation is abandoned never applies', async () => {
    const scope = scopeName('inflight');
    const grant = await client().acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const operationId = `inflight-${n}`;
    const release = await holdScope(scope, grant.fence);
    const pending = client().commit({
      scope,
      fence: grant.fence,
      operationId,
      writes: [{ name: operationId, expectRevision: 0, value: 'in flight' }],
    });
    await untilDatabase(
      () => someoneWaitsIn(url, schema, 'apply'),
      'the commit to wait for the scope lock',
    );
    // Absent is not an answer: the commit is still in flight.
    expect(await client().getOperation(operationId)).toBeNull();
    const abandoned = await client().abandonOperation(operationId, { reason: 'gave up' });
    expect(abandoned.outcome === 'rejected' && abandoned.error.code).toBe('operation_abandoned');
    await release();
    expect(await expectAgreement(client(), scope, operationId, abandoned, await pending)).toBe(
      'abandoned',
    );
  });

  it('an abandon after the commit landed answers the commit', async () => {
    const scope = scopeName('landed');
    const grant = await client().acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const operationId = `landed-${n}`;
    const commit = await client().commit({
      scope,
      fence: grant.fence,
      operationId,
      writes: [{ name: operationId, expectRevision: 0, value: 'landed' }],
    });
    const abandoned = await client().abandonOperation(operationId);
    expect(await expectAgreement(client(), scope, operationId, abandoned, commit)).toBe(
      'committed',
    );
  });

  it('in every race of commit and abandon, the answers and the store agree', async () => {
    const scope = scopeName('race');
    const grant = await client().acquire({ scope, holder: 'w', ttlMs: 60_000 });
    const seen = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const operationId = `race-${n}-${round}`;
      const commit = client().commit({
        scope,
        fence: grant.fence,
        operationId,
        writes: [{ name: operationId, expectRevision: 0, value: round }],
      });
      // Alternate who is sent first; the database decides who lands first.
      const [commitAnswer, abandonAnswer] =
        round % 2 === 0
          ? await Promise.all([commit, client().abandonOperation(operationId)])
          : await Promise.all([
              commit,
              Promise.resolve().then(() => client().abandonOperation(operationId)),
            ]);
      seen.add(await expectAgreement(client(), scope, operationId, abandonAnswer, commitAnswer));
    }
    expect(seen.size).toBeGreaterThan(0);
  });
});
