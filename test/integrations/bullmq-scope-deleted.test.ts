/**
 * A run whose scope an operator deleted: its next commit is refused `scope_deleted`, a refusal
 * that means authority is gone, so the run's signal aborts with it, as for `stale_fence`, and the
 * body stops instead of working on for a scope it can never write again.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { fencedProcessor } from '../../src/integrations/bullmq/index.js';
import { useBullmqFixture, type WorkflowJob } from './bullmq-fixture.js';
import { skipWithoutRedis } from './redis-service.js';

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor on a deleted scope', () => {
  const fixture = useBullmqFixture();

  it("aborts the run's signal when a commit is refused scope_deleted", async () => {
    const fx = fixture();
    const { gate } = fx;
    await gate.registerPolicy({ version: 'v1' });
    const seen: { code: string; aborted: boolean; reason: string | null }[] = [];
    const worker = fx.track(
      new Worker(
        fx.queueName,
        fencedProcessor<WorkflowJob>(
          gate,
          { scope: (job) => `${job.data.workflow}/memory`, policyVersion: 'v1' },
          async (job, ctx) => {
            await gate.deleteScope(`${job.data.workflow}/memory`, { reason: 'operator cleanup' });
            const result = await ctx.commit({
              writes: [{ name: 'summary', expectRevision: 0, value: 'late' }],
            });
            const reason: unknown = ctx.signal.reason;
            seen.push({
              code: result.outcome === 'rejected' ? result.error.code : result.outcome,
              aborted: ctx.signal.aborted,
              reason: isFencegateError(reason) ? reason.code : null,
            });
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
    await fx.queue.add('compact', { workflow: 'wf-gone' });
    await settled;

    expect(seen).toEqual([{ code: 'scope_deleted', aborted: true, reason: 'scope_deleted' }]);
    expect((await gate.getRecord('wf-gone/memory', 'summary')).revision).toBe(0);
  });
});
