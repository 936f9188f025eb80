/**
 * A cutover moves a queue's scopes to a new policy while the old policy's jobs are running. Their
 * commits after the cutover are all refused; the new controller commits on every scope; the
 * cutover report finds the old jobs in the jobs ledger (fed by fencedProcessor) and shows
 * `staleAccepted: 0`.
 */
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { fencedProcessor, recordQueuedJobs } from '../../src/integrations/bullmq/index.js';
import { PausePoints } from '../../src/testing/index.js';
import { useBullmqFixture, type WorkflowJob } from './bullmq-fixture.js';
import { skipWithoutRedis } from './redis-service.js';

const WORKFLOWS = ['wf-1', 'wf-2', 'wf-3', 'wf-4'];
const scopeOf = (job: { data: WorkflowJob }) => `${job.data.workflow}/memory`;

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor across a cutover', () => {
  const fixture = useBullmqFixture();

  it('refuses every commit of the running v7 jobs once their scopes moved to v8', async () => {
    const fx = fixture();
    const { gate } = fx;
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    const points = new PausePoints();
    const rejections: string[] = [];

    const jobs = await fx.queue.addBulk(
      WORKFLOWS.map((workflow) => ({ name: 'compact', data: { workflow } })),
    );
    await recordQueuedJobs(gate, jobs, { scope: scopeOf, policyVersion: 'v7' });
    const worker = fx.track(
      new Worker(
        fx.queueName,
        fencedProcessor<WorkflowJob>(
          gate,
          { scope: scopeOf, policyVersion: 'v7' },
          async (job, ctx) => {
            const read = await gate.getRecord(ctx.scope, 'summary');
            await points.reach(`running:${job.data.workflow}`);
            const result = await ctx.commit({
              writes: [{ name: 'summary', expectRevision: read.revision, value: 'by v7' }],
            });
            if (result.outcome === 'rejected') {
              rejections.push(result.error.code);
              throw new Error(`compaction refused: ${result.error.code}`);
            }
          },
        ),
        { connection: fx.connection(), concurrency: WORKFLOWS.length },
      ),
    );
    worker.on('failed', () => undefined);
    for (const workflow of WORKFLOWS) await points.waitUntilReached(`running:${workflow}`);

    const cutover = await gate.cutover({
      toPolicy: 'v8',
      holder: 'v8-controller',
      prefix: 'wf-',
      reason: 'v7 compaction drops facts',
    });
    points.releaseAll();
    await expect.poll(() => rejections.length, { timeout: 10_000 }).toBe(WORKFLOWS.length);
    expect(rejections).toEqual(WORKFLOWS.map(() => 'stale_fence'));

    for (const { scope, fence } of cutover.fences) {
      const read = await gate.getRecord(scope, 'summary');
      const result = await gate.commit({
        scope,
        fence,
        operationId: `v8-${scope}`,
        policyVersion: 'v8',
        writes: [{ name: 'summary', expectRevision: read.revision, value: 'by v8' }],
      });
      expect(result.outcome).toBe('committed');
    }

    const report = await gate.cutoverReport(cutover.cutoverId);
    expect(report).toMatchObject({
      scopes: WORKFLOWS.length,
      staleAttempts: WORKFLOWS.length,
      staleAccepted: 0,
      staleRejectedByReason: { stale_fence: WORKFLOWS.length },
      liveCommits: WORKFLOWS.length,
      oldJobs: { total: WORKFLOWS.length, byState: { running: WORKFLOWS.length } },
    });
    for (const workflow of WORKFLOWS) {
      expect((await gate.getRecord(`${workflow}/memory`, 'summary')).value).toBe('by v8');
    }
    expect((await gate.verify()).violations).toEqual([]);
  });
});
