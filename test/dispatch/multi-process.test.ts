/**
 * Two dispatcher processes and one paused in-process dispatcher on one store (the first of the
 * test list; the conformance suite proves each store's claims from a second connection). The
 * paused one claims, stops before delivering until its claim lapsed and the others delivered
 * everything, then sends anyway (a process frozen past its deadline): the receiver still applies
 * every effect exactly once, and the paused dispatcher's completions are refused with stale_claim.
 * The processes share store time (the host clock for a SQLite file, the database clock for
 * PostgreSQL), so claim ttls are short real durations here.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Dispatcher, webhookEffector, type DispatchOutcome } from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import { tempDir } from '../helpers/temp-dir.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';
import { commitIntents, intentsFor, pausingEffector } from './helpers.js';
import { Receiver } from './receiver.js';

const run = promisify(execFile);
const dir = tempDir();
afterAll(() => dir.cleanup());

interface ChildReport {
  dispatcherId: string;
  outcomes: Record<DispatchOutcome, number>;
  staleCompletions: number;
  deliveries: number;
}

describe.each(ONE_STORE)('dispatchers in several processes on one $name store', (kind) => {
  const stores = storesFor(kind, 'dispatch_multi_process');

  it('apply every effect exactly once; a paused dispatcher completion is stale_claim', async () => {
    const { store, url: storeUrl } = await stores.open();
    const gate = await Fencegate.open({ store });
    const receiver = await Receiver.start();
    try {
      const url = receiver.url();
      const targetsFile = join(dir.path, `targets-${kind.name}.json`);
      writeFileSync(
        targetsFile,
        JSON.stringify({ targets: { crm: { type: 'webhook', url, timeoutMs: 500 } } }),
      );
      const keys = Array.from({ length: 40 }, (_, i) => `mp-${i}`);
      for (let c = 0; c < 4; c++) {
        await commitIntents(gate, `wf-mp-${c}`, intentsFor(keys.slice(c * 10, c * 10 + 10), 'crm'));
      }

      // The in-process dispatcher claims 4 and freezes before delivering; when it wakes it sends
      // regardless of its deadline, as a frozen process would.
      const webhook = webhookEffector({ type: 'webhook', url, timeoutMs: 2000, headers: {} });
      const pause = pausingEffector({
        deliver: (intent, context) =>
          webhook.deliver(intent, {
            effectKey: context.effectKey,
            signal: new AbortController().signal,
          }),
      });
      const paused = new Dispatcher({
        api: gate,
        dispatcherId: 'in-process',
        effectors: { crm: pause.effector },
        claimTtlMs: 300,
        batchSize: 4,
      });
      const pausedRound = paused.runOnce();
      await pause.paused(4);
      const pausedKeys = (await gate.listIntents({ status: 'claimed', limit: 100 })).items.map(
        (i) => i.effectKey,
      );
      expect(pausedKeys).toHaveLength(4);

      const script = new URL('./dispatcher-process.ts', import.meta.url).pathname;
      const children = await Promise.all(
        ['process-1', 'process-2'].map((id) =>
          run(
            process.execPath,
            ['--import', 'tsx', script, storeUrl, targetsFile, id, String(keys.length)],
            {
              timeout: 30_000,
            },
          ),
        ),
      );
      const reports = children.map((c) => JSON.parse(c.stdout) as ChildReport);
      const delivered = await gate.listIntents({ status: 'delivered', limit: 1000 });
      expect(delivered.items).toHaveLength(keys.length);

      pause.release();
      const summary = await pausedRound;
      expect(summary).toMatchObject({ claimed: 4, staleCompletions: 4 });
      expect(summary.outcomes.delivered).toBe(0);

      // Exactly once at the receiver: one effect per key, for exactly the committed keys.
      expect([...receiver.effects.keys()].sort()).toEqual([...keys].sort());
      expect(receiver.requests.every((r) => r.key !== null && keys.includes(r.key))).toBe(true);
      for (const key of pausedKeys)
        expect(receiver.requestsFor(key).length).toBeGreaterThanOrEqual(2);
      // Each intent was recorded delivered once, across all dispatchers.
      const recorded = reports.reduce(
        (n, r) => n + r.outcomes.delivered + r.outcomes.reconciled,
        0,
      );
      expect(recorded).toBe(keys.length);
      for (const intent of delivered.items) {
        expect(intent.providerRef).toBe(receiver.effects.get(intent.effectKey)?.id);
      }

      const stale = (await gate.audit({ kind: 'intent', outcome: 'rejected', limit: 1000 })).items;
      const staleByPaused = stale.filter(
        (e) => pausedKeys.includes(e.effectKey ?? '') && e.fence === 1,
      );
      expect(staleByPaused.map((e) => e.reason)).toEqual(Array(4).fill('stale_claim'));
      expect((await verifyStore(gate.store)).ok).toBe(true);
    } finally {
      await receiver.close();
      await gate.close();
    }
  });
});
