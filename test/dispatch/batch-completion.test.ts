/**
 * A running dispatcher records the outcomes of deliveries that end together in one store call
 * (Store.completeIntents), with its next claim where the store writes both at once
 * (Store.completeAndClaim), and claims again once half its batch has finished rather than waiting
 * for its slowest delivery. Fencegate.completeIntents and completeAndClaim judge each completion
 * alone. On the in-memory reference store, but for the cases of the store's own write of both.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Dispatcher, type Effector } from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { Store } from '../../src/store/store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';
import { commitIntents, intentsFor, statusOf, waitFor } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An effector whose deliveries of `held` keys wait for `release()`; the rest deliver at once. */
function holdingEffector(held: (effectKey: string) => boolean) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const delivered: string[] = [];
  const effector: Effector = {
    async deliver(intent) {
      if (held(intent.effectKey)) await released;
      delivered.push(intent.effectKey);
      return { status: 'delivered' };
    },
  };
  return { effector, release, delivered };
}

/** A running dispatcher of batches of four that polls only once a minute; stopped after the test. */
function startDispatcher(gate: Fencegate, effector: Effector): Dispatcher {
  const d = new Dispatcher({
    api: gate,
    effectors: { crm: effector },
    batchSize: 4,
    pollIntervalMs: 60_000,
  });
  cleanups.push(() => d.stop());
  d.start();
  return d;
}

/** A gate on `store` whose store calls are recorded. */
async function gateOn(store: Store) {
  const recorded = faultyStore(store);
  const gate = await Fencegate.open({ store: recorded });
  cleanups.push(() => gate.close());
  return { gate, store: recorded };
}

const open = () => gateOn(memoryStore(new ManualClock()));

it('records the outcomes of deliveries that end together in one store call', async () => {
  const { gate, store } = await open();
  const keys = Array.from({ length: 8 }, (_, i) => `together-${i}`);
  await commitIntents(gate, 'wf-together', intentsFor(keys, 'crm'));
  // Every delivery waits until all eight have started, then all end at once.
  let started = 0;
  const { effector, release } = holdingEffector(() => {
    if (++started === keys.length) setImmediate(() => release());
    return true;
  });
  const d = new Dispatcher({ api: gate, effectors: { crm: effector }, batchSize: 8 });

  expect(await d.runOnce()).toMatchObject({ claimed: 8, outcomes: { delivered: 8 } });
  const completionCalls = store.calls.filter((call) => call.method.startsWith('completeIntent'));
  expect(completionCalls).toEqual([{ method: 'completeIntents', fault: null }]);
  for (const key of keys) expect(await statusOf(gate, key)).toBe('delivered');
});

it('claims again once half its batch has finished, while its slowest delivery still runs', async () => {
  const { gate } = await open();
  await commitIntents(gate, 'wf-slow', intentsFor(['a-slow', 'b-1', 'b-2', 'b-3', 'b-4'], 'crm'));
  const { effector, release, delivered } = holdingEffector((key) => key === 'a-slow');
  const d = startDispatcher(gate, effector);

  // The first claim took a-slow and b-1 to b-3; b-4 needs a second claim.
  await waitFor(async () => (await statusOf(gate, 'b-4')) === 'delivered', 'b-4 delivered');
  expect(delivered).not.toContain('a-slow');
  expect(await statusOf(gate, 'a-slow')).toBe('claimed');
  release();
  await waitFor(async () => (await statusOf(gate, 'a-slow')) === 'delivered', 'a-slow delivered');
  await d.stop();
});

it('Fencegate.completeIntents answers a completion that is not valid alone', async () => {
  const { gate } = await open();
  await commitIntents(gate, 'wf-valid', intentsFor(['v-1'], 'crm'));
  const [claimed] = await gate.claimIntents({ dispatcher: 'd1', ttlMs: 10_000, limit: 1 });
  const results = await gate.completeIntents([
    { effectKey: 'v-1', claimFence: claimed!.claimFence, outcome: 'bogus' as 'delivered' },
    { effectKey: 'v-1', claimFence: claimed!.claimFence, outcome: 'delivered' },
  ]);
  expect(results.map((r) => (r.ok ? r.intent.status : r.error.code))).toEqual([
    'invalid_request',
    'delivered',
  ]);
  await expect(gate.completeIntents([])).rejects.toMatchObject({ code: 'invalid_request' });
});

// Whether the outcomes go with the next claim in one write is the store's to offer
// (Store.completeAndClaim, which SQLite, the first of the list, has): these run on a store of the
// list, and the cases above, on the in-memory store, take the path of a store without it.
describe.each(ONE_STORE)('on $name', (kind) => {
  const stores = storesFor(kind, 'dispatch_batch');
  const openListed = async () => gateOn((await stores.open({ clock: new ManualClock() })).store);

  it('sends the outcomes of deliveries that end together with its next claim', async () => {
    const { gate, store } = await openListed();
    const keys = Array.from({ length: 8 }, (_, i) => `next-${i}`);
    await commitIntents(gate, 'wf-next', intentsFor(keys, 'crm'));
    const { effector } = holdingEffector(() => false);
    const d = startDispatcher(gate, effector);

    await waitFor(
      async () =>
        (await Promise.all(keys.map((key) => statusOf(gate, key)))).every(
          (status) => status === 'delivered',
        ),
      'every intent delivered',
    );
    await d.stop();
    const writes = store.calls
      .map((call) => call.method)
      .filter((method) => method.startsWith('complete') || method === 'claimIntents');
    if (store.inner.completeAndClaim === undefined) {
      expect(writes).toContain('completeIntents');
    } else {
      // The first four's outcomes went with the claim of the last four.
      expect(writes.slice(0, 2)).toEqual(['claimIntents', 'completeAndClaim']);
      expect(writes).not.toContain('completeIntent');
    }
  });

  it('Fencegate.completeAndClaim answers each completion and the claim on their own', async () => {
    const { gate } = await openListed();
    await commitIntents(gate, 'wf-both', intentsFor(['both-1', 'both-2'], 'crm'));
    const [first] = await gate.claimIntents({ dispatcher: 'd1', ttlMs: 10_000, limit: 1 });
    const result = await gate.completeAndClaim(
      [
        { effectKey: first!.effectKey, claimFence: first!.claimFence + 1, outcome: 'delivered' },
        {
          effectKey: first!.effectKey,
          claimFence: first!.claimFence,
          outcome: 'bogus' as 'delivered',
        },
        { effectKey: first!.effectKey, claimFence: first!.claimFence, outcome: 'delivered' },
      ],
      { dispatcher: 'd1', ttlMs: 10_000, limit: 5 },
    );
    expect(result.completions.map((r) => (r.ok ? r.intent.status : r.error.code))).toEqual([
      'stale_claim',
      'invalid_request',
      'delivered',
    ]);
    // The claim sees the completions before it: the delivered intent is not claimed again.
    expect(result.claim).toMatchObject({ ok: true });
    const claimed = result.claim.ok ? result.claim.intents.map((intent) => intent.effectKey) : [];
    expect(claimed).toEqual(['both-1', 'both-2'].filter((key) => key !== first!.effectKey));
    expect(await statusOf(gate, first!.effectKey)).toBe('delivered');

    const none = await gate.completeAndClaim([], { dispatcher: 'd1', ttlMs: 10_000, limit: 5 });
    expect(none).toEqual({ completions: [], claim: { ok: true, intents: [] } });
  });
});
