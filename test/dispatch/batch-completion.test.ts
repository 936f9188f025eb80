/**
 * A running dispatcher records the outcomes of deliveries that end together in one store call
 * (Store.completeIntents), and claims again once half its batch has finished rather than waiting
 * for its slowest delivery. Fencegate.completeIntents judges each completion alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Dispatcher, type Effector } from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
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

describe.each(AREA_STORES)('on $name', (kind) => {
  const stores = storesFor(kind, 'dispatch_batch');

  async function open() {
    const store = faultyStore((await stores.open({ clock: new ManualClock() })).store);
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    return { gate, store };
  }

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
    const d = new Dispatcher({
      api: gate,
      effectors: { crm: effector },
      batchSize: 4,
      pollIntervalMs: 60_000,
    });
    cleanups.push(() => d.stop());
    d.start();

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
});
