/**
 * Job ids too long for a fencegate name: two jobs whose ids differ only past 256 characters run,
 * each under a holder of its own, each commit of a run under an operationId of its own, and the
 * jobs ledger keeps two jobs, on real BullMQ and Redis.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fencedProcessor, ledgerJobId } from '../../src/integrations/bullmq/index.js';
import { useBullmqFixture, type WorkflowJob } from './bullmq-fixture.js';
import { skipWithoutRedis } from './redis-service.js';

const LONG_IDS = ['j'.repeat(300) + '-a', 'j'.repeat(300) + '-b'];

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor with long job ids', () => {
  const fixture = useBullmqFixture();

  it('runs each job under names of its own that fit', async () => {
    const fx = fixture();
    const { gate } = fx;
    await gate.registerPolicy({ version: 'v1' });
    const operationIds: string[] = [];
    const worker = fx.track(
      new Worker(
        fx.queueName,
        fencedProcessor<WorkflowJob>(
          gate,
          { scope: (job) => `${job.data.workflow}/memory`, policyVersion: 'v1' },
          async (_job, ctx) => {
            for (const revision of [0, 1]) {
              const result = await ctx.commit({
                writes: [{ name: 'summary', expectRevision: revision, value: revision + 1 }],
              });
              if (result.outcome !== 'committed') throw new Error(result.error.code);
              operationIds.push(result.operationId);
            }
          },
        ),
        { connection: fx.connection() },
      ),
    );
    const failures: string[] = [];
    worker.on('failed', (_job, error) => failures.push(error.message));
    let completed = 0;
    const done = new Promise<void>((resolve) => {
      const settle = () => (completed + failures.length === 2 ? resolve() : undefined);
      worker.on('completed', () => {
        completed += 1;
        settle();
      });
      worker.on('failed', settle);
    });
    await fx.queue.add('compact', { workflow: 'wf-a' }, { jobId: LONG_IDS[0] });
    await fx.queue.add('compact', { workflow: 'wf-b' }, { jobId: LONG_IDS[1] });
    await done;

    expect(failures).toEqual([]);
    expect(new Set(operationIds).size).toBe(4);
    expect(operationIds.every((id) => id.length <= 256)).toBe(true);
    for (const workflow of ['wf-a', 'wf-b']) {
      expect(await gate.getRecord(`${workflow}/memory`, 'summary')).toMatchObject({
        revision: 2,
        value: 2,
      });
    }
    const acquires = (await gate.audit({ kind: 'acquire', limit: 10 })).items;
    const holders = acquires.map((entry) => entry.holder ?? '');
    expect(new Set(holders).size).toBe(2);
    expect(holders.every((holder) => holder.length <= 256)).toBe(true);
    const jobs = await gate.store.listJobs(gate.tenant, ['wf-a/memory', 'wf-b/memory']);
    const ids = LONG_IDS.map((id) => ledgerJobId({ queueName: fx.queueName, id }));
    expect(jobs.map((job) => [job.jobId, job.state]).sort()).toEqual(
      ids.map((id) => [id, 'succeeded']).sort(),
    );
    expect(ids.every((id) => id.length === 256)).toBe(true);
  });
});
