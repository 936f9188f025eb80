/**
 * fencedProcessor with a handler per policy version, on real Redis: one worker running both
 * versions picks the handler of each scope's version; two fleets of one version each hand a job
 * of the other version back to its queue; and a rollback while a v8 job runs refuses that job's
 * commit, after which its retry goes back to the v7 queue and v7 writes.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import {
  fencedProcessor,
  isHandedBack,
  type FencedJobContext,
} from '../../src/integrations/bullmq/index.js';
import type { Fencegate } from '../../src/gate.js';
import { PausePoints } from '../../src/testing/index.js';
import { useBullmqFixture, type BullmqFixture, type WorkflowJob } from './bullmq-fixture.js';
import { skipWithoutRedis } from './redis-service.js';

const scopeOf = (job: { data: WorkflowJob }) => `${job.data.workflow}/memory`;

/** A handler that writes its version into the workflow's summary. */
function writer(gate: Fencegate, version: string, points?: PausePoints) {
  return async (job: Job<WorkflowJob>, ctx: FencedJobContext): Promise<string> => {
    const read = await gate.getRecord(ctx.scope, 'summary');
    if (points !== undefined) await points.reach(`${version}:${job.data.workflow}`);
    const result = await ctx.commit({
      writes: [{ name: 'summary', expectRevision: read.revision, value: `by ${version}` }],
      release: true,
    });
    if (result.outcome === 'rejected') throw new Error(`refused: ${result.error.code}`);
    return version;
  };
}

/** Pins each workflow's scope to its version, as earlier work under that version would. */
async function pin(gate: Fencegate, scopes: Record<string, string>): Promise<void> {
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
  for (const [workflow, version] of Object.entries(scopes)) {
    const scope = `${workflow}/memory`;
    const grant = await gate.acquire({
      scope,
      holder: 'seed',
      ttlMs: 60_000,
      policyVersion: version,
    });
    await gate.release({ scope, holder: 'seed', fence: grant.fence });
  }
}

async function summary(gate: Fencegate, workflow: string): Promise<unknown> {
  return (await gate.getRecord(`${workflow}/memory`, 'summary')).value;
}

/** A second queue, the v8 fleet's, removed with the fixture's. */
function secondQueue(fx: BullmqFixture): Queue {
  const queue = new Queue(`${fx.queueName}-v8`, { connection: fx.connection() });
  fx.onStop(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  return queue;
}

describe.skipIf(skipWithoutRedis('BullMQ'))('fencedProcessor by policy version', () => {
  const fixture = useBullmqFixture();

  it('runs the handler of each scope version in a worker that has both', async () => {
    const fx = fixture();
    const { gate } = fx;
    await pin(gate, { 'wf-1': 'v7', 'wf-2': 'v8', 'wf-3': 'v7' });
    const seen: Record<string, string | null> = {};
    const v7 = writer(gate, 'v7');
    const v8 = writer(gate, 'v8');
    const worker = fx.track(
      new Worker(
        fx.queueName,
        fencedProcessor<WorkflowJob, string>(gate, {
          scope: scopeOf,
          handlers: {
            v7: (job, ctx) => {
              seen[job.data.workflow] = ctx.policyVersion;
              return v7(job, ctx);
            },
            v8: (job, ctx) => {
              seen[job.data.workflow] = ctx.policyVersion;
              return v8(job, ctx);
            },
          },
        }),
        { connection: fx.connection(), concurrency: 3 },
      ),
    );
    const jobs = await fx.queue.addBulk(
      ['wf-1', 'wf-2', 'wf-3', 'wf-4'].map((workflow) => ({ name: 'compact', data: { workflow } })),
    );
    const results = await Promise.all(jobs.map((job) => job.waitUntilFinished(fx.events())));
    expect(results).toEqual(['v7', 'v8', 'v7', 'v7']);
    expect(seen).toEqual({ 'wf-1': 'v7', 'wf-2': 'v8', 'wf-3': 'v7', 'wf-4': 'v7' });
    expect(await summary(gate, 'wf-2')).toBe('by v8');
    // A scope never pinned takes the first version of the handlers.
    expect((await gate.getScope('wf-4/memory'))?.policyVersion).toBe('v7');
    const audit = await gate.audit({ scope: 'wf-2/memory', kind: 'commit' });
    expect(audit.items.map((entry) => entry.policyVersion)).toEqual(['v8']);
    await worker.close();
  });

  it('hands a job of the other version back to its queue in a fleet of one version', async () => {
    const fx = fixture();
    const { gate } = fx;
    await pin(gate, { 'wf-1': 'v7', 'wf-2': 'v8' });
    const v8Queue = secondQueue(fx);
    const v7Fleet = fencedProcessor<WorkflowJob, string>(gate, {
      scope: scopeOf,
      handlers: { v7: writer(gate, 'v7') },
      versionQueues: { v8: v8Queue },
    });
    const v8Fleet = fencedProcessor<WorkflowJob, string>(gate, {
      scope: scopeOf,
      handlers: { v8: writer(gate, 'v8') },
      versionQueues: { v7: fx.queue },
    });
    fx.track(new Worker(fx.queueName, v7Fleet, { connection: fx.connection() }));
    fx.track(new Worker(v8Queue.name, v8Fleet, { connection: fx.connection() }));

    const [forV7, forV8] = await fx.queue.addBulk([
      { name: 'compact', data: { workflow: 'wf-1' } },
      { name: 'compact', data: { workflow: 'wf-2' } },
    ]);
    expect(await forV7!.waitUntilFinished(fx.events())).toBe('v7');
    const handed: unknown = await forV8!.waitUntilFinished(fx.events());
    expect(isHandedBack(handed)).toBe(true);
    if (!isHandedBack(handed)) return;
    expect(handed.handedBackTo).toMatchObject({ policyVersion: 'v8', queue: v8Queue.name });
    const copy = await v8Queue.getJob(handed.handedBackTo.jobId);
    expect(await copy!.waitUntilFinished(fx.events(v8Queue.name))).toBe('v8');
    expect(await summary(gate, 'wf-2')).toBe('by v8');
    // Handed back twice (a run that died before its job completed): still one job there.
    await v8Queue.add('compact', { workflow: 'wf-2' }, { jobId: handed.handedBackTo.jobId });
    expect(await v8Queue.getJobCountByTypes('completed', 'waiting', 'active')).toBe(1);
  });

  it('refuses the v8 commit after a rollback mid-flight; the retry goes back to v7', async () => {
    const fx = fixture();
    const { gate } = fx;
    const workflows = Array.from({ length: 8 }, (_, i) => `wf-${i}`);
    await pin(gate, Object.fromEntries(workflows.map((workflow) => [workflow, 'v7'])));
    await gate.rollouts.start({
      rolloutId: 'v8-ramp',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [50, 100],
    });
    const moved = (await gate.listScopes({ prefix: 'wf-' })).items.find(
      (scope) => scope.policyVersion === 'v8',
    );
    expect(moved).toBeDefined();
    const workflow = moved!.scope.replace('/memory', '');
    const points = new PausePoints();
    const v8Queue = secondQueue(fx);
    const refusals: string[] = [];
    const v8 = writer(gate, 'v8', points);
    fx.track(
      new Worker(
        fx.queueName,
        fencedProcessor<WorkflowJob, string>(gate, {
          scope: scopeOf,
          handlers: { v7: writer(gate, 'v7') },
          versionQueues: { v8: v8Queue },
        }),
        { connection: fx.connection() },
      ),
    );
    const v8Worker = fx.track(
      new Worker(
        v8Queue.name,
        fencedProcessor<WorkflowJob, string>(gate, {
          scope: scopeOf,
          handlers: {
            v8: (job, ctx) =>
              v8(job, ctx).catch((error: unknown) => {
                refusals.push(String(error));
                throw error;
              }),
          },
          versionQueues: { v7: fx.queue },
        }),
        { connection: fx.connection() },
      ),
    );
    v8Worker.on('failed', () => undefined);

    const job = await v8Queue.add('compact', { workflow }, { attempts: 2 });
    await points.waitUntilReached(`v8:${workflow}`);
    await gate.rollouts.rollback({ rolloutId: 'v8-ramp', reason: 'v8 drops facts' });
    points.release(`v8:${workflow}`);

    const handed: unknown = await job.waitUntilFinished(fx.events(v8Queue.name));
    expect(refusals).toEqual(['Error: refused: stale_fence']);
    expect(isHandedBack(handed) && handed.handedBackTo.policyVersion).toBe('v7');
    if (!isHandedBack(handed)) return;
    const copy = await fx.queue.getJob(handed.handedBackTo.jobId);
    expect(await copy!.waitUntilFinished(fx.events())).toBe('v7');
    expect(await summary(gate, workflow)).toBe('by v7');
    const report = await gate.rollouts.report('v8-ramp');
    expect(report?.rollback).toMatchObject({ staleAttempts: 1, staleAccepted: 0 });
    const audit = await gate.audit({ scope: moved!.scope, kind: 'commit', outcome: 'committed' });
    expect(audit.items.map((entry) => entry.policyVersion)).toEqual(['v7']);
    expect((await gate.verify()).violations).toEqual([]);
  });

  it('refuses options that contradict each other', () => {
    const gate = fixture().gate;
    const run = () => Promise.resolve('done');
    expect(() => fencedProcessor(gate, { scope: scopeOf, handlers: {} })).toThrow(/at least one/);
    expect(() =>
      fencedProcessor(gate, { scope: scopeOf, policyVersion: 'v7', handlers: { v7: run } }),
    ).toThrow(/not both/);
    expect(() =>
      fencedProcessor(gate, { scope: scopeOf, versionQueues: { v8: fixture().queue } }, run),
    ).toThrow(/versionQueues goes with handlers/);
  });
});
