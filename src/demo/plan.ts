/**
 * The incident's cast, fixed before anything runs: which workflows the 600 version-7 jobs touch,
 * in which state each job is when version 8 takes over, which ones resume or arrive late, and
 * which controller commits are retried. Everything follows from the seed; the checks afterwards
 * read outcomes from the store and use the plan only to know what was attempted.
 */
import { sample, seededRandom, mixSeed } from './seeded.js';

export const POLICY_V7 = {
  version: 'v7',
  digest: 'sha256:compaction-policy-v7',
  description: 'memory compaction v7 (drops required handoff facts now and then)',
} as const;
export const POLICY_V8 = {
  version: 'v8',
  digest: 'sha256:compaction-policy-v8',
  description: 'memory compaction v8 (keeps every required handoff fact)',
} as const;

/** The v7 controller that wrote every workflow's memory before the incident. */
export const SEED_HOLDER = 'controller-v7';
/** The v8 controller the cutover hands every affected workflow to. */
export const CONTROLLER = 'controller-v8';
export const MEMORY = 'memory';
/** How many v7 worker processes the jobs were spread over. */
const V7_WORKERS = 40;
/** v7 worker leases outlive the demo: only the cutover takes their authority away. */
export const V7_LEASE_MS = 3_600_000;

/** The incident's proportions (of 600 jobs): 80 running, 120 reserved, 400 queued; 30 resume. */
const SHARE = { running: 80, reserved: 120, resumed: 30, delayed: 100, retried: 20, of: 600 };

export type V7JobState = 'running' | 'reserved' | 'queued';

export interface V7Job {
  jobId: string;
  workflow: number;
  scope: string;
  /** The v7 worker process holding the job's lease. */
  worker: string;
  state: V7JobState;
  /** After the cutover: resumes and commits, arrives as a delayed commit, or stays where it is. */
  fate: 'resumed' | 'delayed' | 'idle';
}

export interface IncidentPlan {
  seed: number;
  workflows: number;
  cutoverId: string;
  /** The old jobs: running first, then reserved, then queued. */
  jobs: V7Job[];
  resumed: V7Job[];
  delayed: V7Job[];
  /** The v7 worker that tries to acquire a fresh lease after the cutover. */
  freshAcquire: V7Job;
  /** Affected workflows whose v8 compaction is delivered twice under one operationId. */
  retried: Set<number>;
}

export function scopeOf(workflow: number): string {
  return `wf-${workflow}/memory`;
}

export function v7JobId(workflow: number): string {
  return `compact-v7-wf-${workflow}`;
}

export function v8JobId(workflow: number): string {
  return `compact-v8-wf-${workflow}`;
}

/** The operationId of a v7 job's commit: stable across its retries, as a queue would keep it. */
export function v7OperationId(workflow: number): string {
  return `${v7JobId(workflow)}-commit`;
}

export function v8OperationId(workflow: number): string {
  return `${v8JobId(workflow)}-commit`;
}

function share(jobs: number, part: number): number {
  return Math.round((jobs * part) / SHARE.of);
}

export function planIncident(seed: number, workflows: number, jobCount: number): IncidentPlan {
  if (!Number.isInteger(workflows) || workflows < 1) throw new RangeError('workflows must be >= 1');
  if (!Number.isInteger(jobCount) || jobCount < 1 || jobCount > workflows) {
    throw new RangeError('jobs must be between 1 and the number of workflows');
  }
  const running = share(jobCount, SHARE.running);
  const reserved = Math.min(jobCount - running, share(jobCount, SHARE.reserved));
  const affected = sample(workflows, jobCount, seededRandom(mixSeed(seed, 0x1ac)));
  const jobs: V7Job[] = affected.map((workflow, i) => ({
    jobId: v7JobId(workflow),
    workflow,
    scope: scopeOf(workflow),
    worker: `celery-v7-w${String(i % V7_WORKERS).padStart(2, '0')}`,
    state: i < running ? 'running' : i < running + reserved ? 'reserved' : 'queued',
    fate: 'idle',
  }));
  // The running jobs that resume after the cutover; the delayed commits come from the other
  // running jobs first, then from reserved ones whose messages were already in flight.
  const resumedCount = Math.min(running, share(jobCount, SHARE.resumed));
  const resumed = jobs.slice(0, resumedCount);
  const delayed = jobs.slice(resumedCount, resumedCount + share(jobCount, SHARE.delayed));
  for (const job of resumed) job.fate = 'resumed';
  for (const job of delayed) job.fate = 'delayed';
  const idle = jobs.filter((job) => job.fate === 'idle');
  const retriedCount = Math.max(1, share(jobCount, SHARE.retried));
  return {
    seed,
    workflows,
    cutoverId: `incident-v8-seed-${seed}`,
    jobs,
    resumed,
    delayed,
    freshAcquire: idle.find((job) => job.state === 'queued') ?? idle[0] ?? jobs[0]!,
    retried: new Set(jobs.slice(-retriedCount).map((job) => job.workflow)),
  };
}
