/**
 * The incident BullMQ documents as "at least once": worker A's lock lapses (it stops renewing),
 * BullMQ's own stalled checker on worker B hands the job to B, and A, still running, later tries
 * to write. With fencedProcessor the job still runs twice, but only B's write lands: A's lease
 * lapsed with its lock, its signal aborted, and its commit is refused `stale_fence`.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { useBullmqFixture } from './bullmq-fixture.js';
import { GATE_KINDS, twoRuns } from './bullmq-two-runs.js';
import { skipWithoutRedis } from './redis-service.js';

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor with a stalled BullMQ job', () => {
  const fixture = useBullmqFixture();

  for (const api of GATE_KINDS) {
    it(`runs the job twice but lets only the run holding the lock write (${api})`, async () => {
      const fx = fixture();
      const { points, runs, results, processor, close } = await twoRuns(fx, api);

      await fx.queue.add('compact', { workflow: 'wf-1' }, { jobId: 'compact-wf-1' });
      // A holds the lock for 1 s and never renews it: a process frozen by a long GC pause.
      const a = fx.track(
        new Worker(fx.queueName, processor('A'), {
          connection: fx.connection(),
          lockDuration: 1_000,
          skipLockRenewal: true,
          skipStalledCheck: true,
        }),
      );
      a.on('error', () => undefined); // A's late completion fails: BullMQ gave its lock away.
      await points.waitUntilReached('A:after-read');

      // B's stalled checker finds the lapsed lock and moves the job back to wait; B takes it.
      fx.track(
        new Worker(fx.queueName, processor('B'), {
          connection: fx.connection(),
          lockDuration: 5_000,
          stalledInterval: 300,
        }),
      );
      await expect.poll(() => results.get('B'), { timeout: 10_000 }).toBeDefined();
      points.release('A:after-read');
      await expect.poll(() => results.get('A'), { timeout: 10_000 }).toBeDefined();

      const [runA, runB] = runs;
      expect(runs.map((run) => run.worker)).toEqual(['A', 'B']);
      expect(runB?.ctx.fence).toBe((runA?.ctx.fence ?? 0) + 1);
      expect(results.get('B')).toMatchObject({ outcome: 'committed' });
      expect(results.get('A')).toMatchObject({
        outcome: 'rejected',
        error: { code: 'stale_fence', details: { currentFence: runB?.ctx.fence } },
      });
      expect(runA?.ctx.signal.aborted).toBe(true);
      expect(await fx.gate.getRecord('wf-1/memory', 'summary')).toMatchObject({
        value: { by: 'B' },
        revision: 1,
      });
      const [ledger] = await fx.gate.store.listJobs(fx.gate.tenant, ['wf-1/memory']);
      expect(ledger).toMatchObject({ state: 'succeeded', fence: runB?.ctx.fence });
      expect((await fx.gate.verify()).violations).toEqual([]);
      await close();
    });
  }
});
