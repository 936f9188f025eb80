/**
 * Dispatch without polling across processes on PostgreSQL: intents committed through one store
 * (another process's pool, as far as PostgreSQL can tell) reach a listener on another by
 * LISTEN/NOTIFY once the transaction commits, and wake a dispatcher whose poll interval is a
 * minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { MINUTE, observedSleep, sleepyDispatcher } from '../dispatch/sleepy-dispatcher.js';
import { Receiver } from '../dispatch/receiver.js';
import { dropSchema, pgUrl, testSchema, withClient } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('intent_notify');
let url: string;
let committing: PostgresStore;
let dispatching: PostgresStore;

beforeAll(async () => {
  url = pgUrl();
  committing = await PostgresStore.open({ url, schema });
  // The dispatching store's sessions carry the schema as their application name, so the LISTEN
  // session counted below is this file's, not one of another test file running at the same time.
  const named = new URL(url);
  named.searchParams.set('application_name', schema);
  dispatching = await PostgresStore.open({ url: named.toString(), schema });
});

afterAll(async () => {
  await committing.close();
  await dispatching.close();
  await dropSchema(url, schema);
});

async function commitIntents(tenant: string, scope: string, keys: string[]): Promise<void> {
  const gate = (await Fencegate.open({ store: committing })).forTenant(tenant);
  const grant = await gate.acquire({ scope, holder: 'w', ttlMs: MINUTE });
  const result = await gate.commit({
    scope,
    fence: grant.fence,
    operationId: `op-${scope}`,
    intents: keys.map((effectKey) => ({ effectKey, target: 'hook', payload: { effectKey } })),
  });
  expect(result.outcome).toBe('committed');
}

describe.skipIf(noPostgres)('intent notifications on PostgreSQL', () => {
  it('tell a listener on another pool which tenant has new intents, once committed', async () => {
    const heard: string[] = [];
    let onHeard: () => void = () => undefined;
    const stop = await dispatching.watchIntents((tenant) => {
      heard.push(tenant);
      onHeard();
    });
    try {
      const arrived = new Promise<void>((resolve) => (onHeard = resolve));
      await commitIntents('acme', 'notify/1', ['n-1', 'n-2', 'n-3']);
      await arrived;
      // Three intent rows in one transaction: one notification.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual(['acme']);
    } finally {
      await stop();
    }
  });

  it('wake a dispatcher with a one-minute poll interval', async () => {
    const receiver = await Receiver.start();
    const naps = observedSleep();
    const dispatcher = sleepyDispatcher(
      (await Fencegate.open({ store: dispatching })).forTenant('wakes'),
      receiver.url(),
      naps,
      'pg-waker',
    );
    try {
      const asleep = naps.nextNap();
      const before = await listeners();
      dispatcher.start();
      await asleep;
      // LISTEN is set up asynchronously; a notification before it would be found by the poll only.
      await listening(before);
      await commitIntents('wakes', 'notify/2', ['w-1']);
      await receiver.waitForRequests(1);
      expect(receiver.requests.map((r) => r.key)).toEqual(['w-1']);
      expect(naps.naps[0]).toBe(MINUTE);
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  }, 15_000);
});

/** This file's LISTEN sessions on the intents channel, as the database shows them. */
async function listeners(): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
       WHERE query = 'LISTEN fencegate_intents' AND application_name = $1`,
      [schema],
    );
    return Number(rows[0]?.n ?? 0);
  });
}

/** Resolves once the database shows more LISTEN sessions than `before`. */
async function listening(before: number): Promise<void> {
  while ((await listeners()) <= before) await new Promise((resolve) => setTimeout(resolve, 10));
}
