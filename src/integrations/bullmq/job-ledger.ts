/**
 * BullMQ job lifecycle in the jobs ledger, so a cutover report counts a queue's jobs by the state
 * they were last in. A job's ledger id is `<queue>/<job id>` (escaped, and fitted to a name's
 * length with a digest of the whole when longer): job ids repeat across queues. Events are recorded only for runs that know their policy version (pinned on the scope or
 * given in the options): the ledger exists for cutovers, which move scopes between policies.
 */
import type { Job } from 'bullmq';
import type { FencegateOpsApi } from '../../api.js';
import type { JobState } from '../../types.js';
import { escapeName, fitName } from '../name-escape.js';

export type JobLedger = Pick<FencegateOpsApi, 'recordJobEvents'>;

export function ledgerJobId(job: Pick<Job, 'queueName' | 'id'>): string {
  return fitName(`${escapeName(job.queueName)}/${escapeName(job.id ?? '')}`);
}

/** The attempt a job's events carry: the run BullMQ is on, 1 for a job not started yet. */
export function ledgerAttempt(job: Pick<Job, 'attemptsStarted'>): number {
  return Math.max(1, job.attemptsStarted);
}

export interface RunGeneration {
  scope: string;
  fence: number;
  policyVersion: string | null;
}

/**
 * Records the run's states in one call, in order: the last is the job's state from then on. A run
 * records them with its lease operations (fenced-processor.ts); this is for the rest.
 */
export async function recordJobStates(
  ledger: JobLedger,
  job: Job,
  run: RunGeneration,
  states: readonly JobState[],
): Promise<void> {
  const policyVersion = run.policyVersion;
  if (policyVersion === null) return;
  await ledger.recordJobEvents(
    states.map((state) => ({
      jobId: ledgerJobId(job),
      scope: run.scope,
      policyVersion,
      fence: run.fence,
      state,
      attempt: ledgerAttempt(job),
    })),
  );
}

/**
 * Records jobs just added to a queue as `queued`, under the current fence of their scope (0 for a
 * scope never granted): the generation they were issued under.
 */
export async function recordQueuedJobs(
  gate: JobLedger & { getScope(scope: string): Promise<{ fence: number } | null> },
  jobs: readonly Job[],
  options: { scope: (job: Job) => string; policyVersion: string },
): Promise<void> {
  if (jobs.length === 0) return;
  const events = await Promise.all(
    jobs.map(async (job) => {
      const scope = options.scope(job);
      const current = await gate.getScope(scope);
      return {
        jobId: ledgerJobId(job),
        scope,
        policyVersion: options.policyVersion,
        fence: current?.fence ?? 0,
        state: 'queued' as const,
        attempt: ledgerAttempt(job),
      };
    }),
  );
  await gate.recordJobEvents(events);
}
