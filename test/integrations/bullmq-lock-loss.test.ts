/**
 * A run whose BullMQ lock is taken away while it runs (a Redis failover, an eviction, a renewal
 * that came too late): BullMQ reports `lockRenewalFailed` and lets the processor run on. The run
 * must give up its authority in the store at once (the next run need not wait out its lease) and
 * refuse its own later commits, so the job, run twice, writes once.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { useBullmqFixture } from './bullmq-fixture.js';
import { GATE_KINDS, twoRuns } from './bullmq-two-runs.js';
import { skipWithoutRedis } from './redis-service.js';

describe.skipIf(skipWithoutRedis('BullMQ'))(
  'fencedProcessor when BullMQ loses the job lock',
  () => {
    const fixture = useBullmqFixture();

    for (const api of GATE_KINDS) {
      it(`ends the run's authority in the store and refuses its later commits (${api})`, async () => {
        const fx = fixture();
        const { points, runs, results, processor, close } = await twoRuns(fx, api);

        const job = await fx.queue.add('compact', { workflow: 'wf-1' }, { jobId: 'compact-wf-1' });
        // A renews its 4 s lock every 2 s: the lease (same ttl) would outlive the lost lock by
        // seconds if only the local signal reacted.
        const a = fx.track(
          new Worker(fx.queueName, processor('A'), {
            connection: fx.connection(),
            lockDuration: 4_000,
            skipStalledCheck: true,
          }),
        );
        a.on('error', () => undefined); // A's renewal and late completion fail: the lock is gone.
        await points.waitUntilReached('A:after-read');

        const redis = fx.connection();
        const lockKey = `bull:${fx.queueName}:${job.id ?? ''}:lock`;
        expect(await redis.del(lockKey)).toBe(1);
        await expect.poll(() => runs[0]?.ctx.signal.aborted, { timeout: 5_000 }).toBe(true);
        // The store no longer names A the holder: nobody has to wait out A's lease.
        await expect
          .poll(async () => (await fx.gate.getScope('wf-1/memory'))?.holder, { timeout: 5_000 })
          .toBeNull();

        points.release('A:after-read');
        await expect.poll(() => results.get('A'), { timeout: 5_000 }).toBeDefined();
        expect(results.get('A')).toMatchObject({
          outcome: 'rejected',
          error: { code: 'authority_revoked' },
        });

        // A's worker stops taking jobs; B's stalled checker finds the job without a lock and runs it
        // again.
        await a.close(true);
        fx.track(
          new Worker(fx.queueName, processor('B'), {
            connection: fx.connection(),
            lockDuration: 5_000,
            stalledInterval: 300,
          }),
        );
        await expect.poll(() => results.get('B'), { timeout: 10_000 }).toBeDefined();
        expect(results.get('B')).toMatchObject({ outcome: 'committed' });
        expect(runs.map((run) => run.worker)).toEqual(['A', 'B']);
        expect(await fx.gate.getRecord('wf-1/memory', 'summary')).toMatchObject({
          value: { by: 'B' },
          revision: 1,
        });
        expect((await fx.gate.verify()).violations).toEqual([]);
        await close();
      });
    }
  },
);
