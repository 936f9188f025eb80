/**
 * A run's last commit with `release: true`: the commit gives up the job's scope and records the
 * job `succeeded` in its transaction, so the run makes two store operations (acquire, commit) and
 * no release of its own. A run that fails after that commit records its final state on its own.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fencedProcessor } from '../../src/integrations/bullmq/index.js';
import { useBullmqFixture, type WorkflowJob } from './bullmq-fixture.js';
import { skipWithoutRedis } from './redis-service.js';

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor with a releasing last commit', () => {
  const fixture = useBullmqFixture();

  for (const outcome of ['returns', 'throws'] as const) {
    it(`releases the scope with the commit; the job's last state follows the run (${outcome})`, async () => {
      const fx = fixture();
      const { gate } = fx;
      await gate.registerPolicy({ version: 'v1' });
      const calls: string[] = [];
      const counted = new Proxy(gate, {
        get(target, name, receiver) {
          const value: unknown = Reflect.get(target, name, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(String(name));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const aborted: boolean[] = [];
      const worker = fx.track(
        new Worker(
          fx.queueName,
          fencedProcessor<WorkflowJob>(
            counted,
            { scope: (job) => `${job.data.workflow}/memory`, policyVersion: 'v1' },
            async (_job, ctx) => {
              const result = await ctx.commit({
                writes: [{ name: 'summary', expectRevision: 0, value: 'done' }],
                release: true,
              });
              aborted.push(ctx.signal.aborted);
              if (result.outcome !== 'committed') throw new Error(result.error.code);
              if (outcome === 'throws') throw new Error('failed after its last commit');
            },
          ),
          { connection: fx.connection() },
        ),
      );
      worker.on('failed', () => undefined);
      const settled = new Promise((resolve) => {
        worker.on('completed', resolve);
        worker.on('failed', resolve);
      });
      await fx.queue.add('compact', { workflow: 'wf-1' });
      await settled;

      const scope = await gate.getScope('wf-1/memory');
      expect(scope).toMatchObject({ fence: 1, holder: null, leaseExpiresAt: null });
      expect(aborted).toEqual([true]);
      const jobs = await gate.store.listJobs(gate.tenant, ['wf-1/memory']);
      expect(jobs.map((job) => [job.state, job.fence])).toEqual([
        [outcome === 'returns' ? 'succeeded' : 'failed', 1],
      ]);
      expect(calls).toEqual(
        outcome === 'returns' ? ['acquire', 'commit'] : ['acquire', 'commit', 'recordJobEvents'],
      );
      const kinds = (await gate.audit({ limit: 100 })).items.map((e) => e.kind);
      expect(kinds).toEqual(['acquire', 'commit', 'release']);
    });
  }
});
