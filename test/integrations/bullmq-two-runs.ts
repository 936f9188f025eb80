/**
 * Two runs of one BullMQ job that read the workflow's summary record and write it back, as the
 * stalled-job and lost-lock tests run them: through the library or a FencegateClient with a worker
 * token, worker A pausing after its read (`A:after-read`) until the test lets it commit.
 */
import { fencedProcessor, type FencedJobContext } from '../../src/integrations/bullmq/index.js';
import { PausePoints } from '../../src/testing/index.js';
import type { CommitResult } from '../../src/types.js';
import type { BullmqFixture, WorkflowJob } from './bullmq-fixture.js';
import { startHttpGate } from './http-gate.js';

export type GateKind = 'the library' | 'FencegateClient with a worker token';
export const GATE_KINDS: readonly GateKind[] = [
  'the library',
  'FencegateClient with a worker token',
];

export async function twoRuns(fx: BullmqFixture, api: GateKind) {
  const http = api === 'the library' ? null : await startHttpGate(fx.gate.store, fx.gate.tenant);
  const gate = http?.worker ?? fx.gate;
  const points = new PausePoints();
  const runs: { worker: string; ctx: FencedJobContext }[] = [];
  const results = new Map<string, CommitResult>();
  const processor = (worker: string) =>
    fencedProcessor<WorkflowJob>(
      gate,
      { scope: (job) => `${job.data.workflow}/memory`, policyVersion: 'v1' },
      async (_job, ctx) => {
        runs.push({ worker, ctx });
        const read = await gate.getRecord(ctx.scope, 'summary');
        if (worker === 'A') await points.reach('A:after-read');
        const result = await ctx.commit({
          writes: [{ name: 'summary', expectRevision: read.revision, value: { by: worker } }],
        });
        results.set(worker, result);
        return worker;
      },
    );
  return { points, runs, results, processor, close: async () => await http?.close() };
}
