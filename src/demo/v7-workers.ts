/**
 * The old generation: v7 workers take a lease on each job's workflow, the queue reports where each
 * job stands, and the jobs that already ran compute their (sometimes fact-dropping) compaction.
 * After the cutover some of them wake up and commit with the fence they still hold.
 */
import type { Fencegate } from '../gate.js';
import { isFencegateError } from '../errors.js';
import type { CommitResult, JobEvent } from '../types.js';
import { inBatches } from './batches.js';
import { compactV7, missingFacts, type WorkflowMemory } from './handoff-facts.js';
import { recordEvents } from './job-events.js';
import {
  MEMORY,
  POLICY_V7,
  V7_LEASE_MS,
  v7OperationId,
  type IncidentPlan,
  type V7Job,
} from './plan.js';

export interface IssuedJob extends V7Job {
  /** The fence of the v7 worker's lease: the generation the job carries. */
  fence: number;
  /** For jobs that will commit: the memory revision they read and the candidate they computed. */
  readRevision: number;
  candidate: WorkflowMemory | null;
  dropsFacts: boolean;
}

export async function issueV7Jobs(
  gate: Fencegate,
  plan: IncidentPlan,
  batchSize: number,
  onBatch: (done: number) => void,
): Promise<IssuedJob[]> {
  const issued = await inBatches(
    plan.jobs,
    batchSize,
    async (job): Promise<IssuedJob> => {
      const grant = await gate.acquire({
        scope: job.scope,
        holder: job.worker,
        ttlMs: V7_LEASE_MS,
        policyVersion: POLICY_V7.version,
      });
      if (job.fate === 'idle') {
        return { ...job, fence: grant.fence, readRevision: 0, candidate: null, dropsFacts: false };
      }
      // This job ran before the cutover: it read the memory and computed its compaction, then
      // paused (a long model call, a GC pause, a partitioned worker) before committing.
      const record = await gate.getRecord(job.scope, MEMORY);
      const memory = record.value as WorkflowMemory;
      const candidate = compactV7(memory, plan.seed, job.workflow);
      return {
        ...job,
        fence: grant.fence,
        readRevision: record.revision,
        candidate,
        dropsFacts: missingFacts(memory.facts, candidate).length > 0,
      };
    },
    onBatch,
  );
  const events: JobEvent[] = [];
  for (const job of issued) {
    const base = { jobId: job.jobId, scope: job.scope, policyVersion: POLICY_V7.version };
    events.push({ ...base, fence: job.fence, state: 'queued', attempt: 1 });
    if (job.state !== 'queued')
      events.push({ ...base, fence: job.fence, state: 'reserved', attempt: 1 });
    if (job.state === 'running')
      events.push({ ...base, fence: job.fence, state: 'running', attempt: 1 });
  }
  await recordEvents(gate, events);
  return issued;
}

/**
 * Stale jobs commit their compaction with the fence they were issued under, as if nothing had
 * happened; each reports `failed` to the ledger once the store refuses it.
 */
export async function commitStale(
  gate: Fencegate,
  jobs: readonly IssuedJob[],
  batchSize: number,
): Promise<CommitResult[]> {
  const results = await inBatches(jobs, batchSize, (job) =>
    gate.commit({
      scope: job.scope,
      fence: job.fence,
      operationId: v7OperationId(job.workflow),
      taskId: job.jobId,
      policyVersion: POLICY_V7.version,
      writes: [{ name: MEMORY, expectRevision: job.readRevision, value: job.candidate }],
    }),
  );
  await recordEvents(
    gate,
    jobs.map((job, i) => ({
      jobId: job.jobId,
      scope: job.scope,
      policyVersion: POLICY_V7.version,
      fence: job.fence,
      state: results[i]?.outcome === 'committed' ? 'succeeded' : 'failed',
      attempt: 1,
    })),
  );
  return results;
}

/** A v7 worker asks for a fresh lease after the cutover; answers the error code, or 'granted'. */
export async function acquireFreshV7Lease(gate: Fencegate, job: IssuedJob): Promise<string> {
  try {
    await gate.acquire({
      scope: job.scope,
      holder: job.worker,
      ttlMs: V7_LEASE_MS,
      policyVersion: POLICY_V7.version,
    });
    return 'granted';
  } catch (error) {
    if (isFencegateError(error)) return error.code;
    throw error;
  }
}
