/**
 * The policy-cutover incident, end to end, as a library function: 10,000 workflows, 600 v7
 * compaction jobs caught mid-flight, a cutover to v8, stale and delayed v7 commits, a v7 worker
 * asking for a fresh lease, duplicated v8 deliveries, the v8 controller compacting every affected
 * workflow; then the required observations checked from the store.
 */
import { performance } from 'node:perf_hooks';
import type { CommitResult } from '../types.js';
import type { IncidentDemoOptions, IncidentDemoResult } from './demo-types.js';
import { batchSizeFor } from './batches.js';
import { cutOverAffected } from './cutover-phase.js';
import { checkIncident } from './invariants.js';
import { Phases } from './phases.js';
import { planIncident } from './plan.js';
import { createWorkflows, registerPolicies, requireEmptyTenant } from './setup.js';
import { loadStoreView } from './store-view.js';
import { compactAffected } from './v8-controller.js';
import { acquireFreshV7Lease, commitStale, issueV7Jobs, type IssuedJob } from './v7-workers.js';

export const DEFAULT_WORKFLOWS = 10_000;
export const DEFAULT_JOBS = 600;
export const DEFAULT_SEED = 7;

function rejectedCount(results: readonly CommitResult[]): number {
  return results.filter((result) => result.outcome === 'rejected').length;
}

export async function runIncidentDemo(options: IncidentDemoOptions): Promise<IncidentDemoResult> {
  const { gate } = options;
  const workflows = options.workflows ?? DEFAULT_WORKFLOWS;
  const jobCount = options.jobs ?? DEFAULT_JOBS;
  const seed = options.seed ?? DEFAULT_SEED;
  const batch = options.batchSize ?? batchSizeFor(gate.store);
  const plan = planIncident(seed, workflows, jobCount);
  const phases = new Phases(options.onProgress);
  const started = performance.now();

  await requireEmptyTenant(gate);
  await phases.run(`create ${workflows} workflows under v7`, workflows, async (tick) => {
    await registerPolicies(gate);
    await createWorkflows(gate, plan, batch, tick);
  });
  const issued = await phases.run(`issue ${jobCount} v7 compaction jobs`, jobCount, (tick) =>
    issueV7Jobs(gate, plan, batch, tick),
  );
  const byWorkflow = new Map(issued.map((job) => [job.workflow, job]));
  const issuedOf = (jobs: readonly { workflow: number }[]): IssuedJob[] =>
    jobs.map((job) => byWorkflow.get(job.workflow)!);

  const cutover = await phases.run(`cut ${jobCount} workflows over to v8`, 1, () =>
    cutOverAffected(gate, plan),
  );
  const resumed = await phases.run(`${plan.resumed.length} running v7 jobs resume`, 1, () =>
    commitStale(gate, issuedOf(plan.resumed), batch),
  );
  const freshAcquire = await phases.run('a v7 worker asks for a fresh lease', 1, () =>
    acquireFreshV7Lease(gate, byWorkflow.get(plan.freshAcquire.workflow)!),
  );
  const controller = await phases.run(
    `v8 controller compacts ${jobCount} workflows`,
    jobCount,
    (tick) => compactAffected(gate, plan, cutover.fences, batch, tick),
  );
  const delayed = await phases.run(`${plan.delayed.length} delayed v7 commits arrive`, 1, () =>
    commitStale(gate, issuedOf(plan.delayed), batch),
  );
  const { view, checked } = await phases.run('check invariants from the store', 1, async () => {
    const view = await loadStoreView(gate, plan);
    return { view, checked: checkIncident(view, plan) };
  });
  if (view.report === null) throw new Error(`cutover ${plan.cutoverId} has no report`);

  const candidates = issued.filter((job) => job.candidate !== null);
  const count = (state: string): number => plan.jobs.filter((job) => job.state === state).length;
  return {
    ok: checked.invariants.every((invariant) => invariant.ok),
    seed,
    workflows,
    jobs: jobCount,
    tenant: gate.tenant,
    cutoverId: plan.cutoverId,
    plan: {
      running: count('running'),
      reserved: count('reserved'),
      queued: count('queued'),
      resumed: plan.resumed.length,
      delayed: plan.delayed.length,
      retried: plan.retried.size,
    },
    jobsAtCutover: cutover.atCutover.oldJobs.byState,
    report: view.report,
    store: checked.observations,
    answers: {
      resumedRejected: rejectedCount(resumed),
      delayedRejected: rejectedCount(delayed),
      replayed: controller.replayed,
      freshAcquire,
      v7CandidatesDroppingFacts: candidates.filter((job) => job.dropsFacts).length,
      v7Candidates: candidates.length,
    },
    invariants: checked.invariants,
    phases: phases.timings,
    totalMs: Math.round(performance.now() - started),
  };
}
