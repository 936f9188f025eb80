/**
 * Version 8's compaction jobs on the scopes the ramp moved. Each job acquires its scope as a
 * v8-only worker (the grant records it `running` in the jobs ledger), reads the memory, compacts
 * it and commits against the revision it read, releasing the scope in the same transaction
 * (`succeeded`). A job left in flight stops after its acquire and compaction: it holds its grant
 * and its pending write until it resumes.
 * v8's defect (v8-compaction.ts) shows in the records it writes at 25 %.
 */
import type { Fencegate } from '../../gate.js';
import { fail, isFencegateError } from '../../errors.js';
import type { CommitRequest, CommitResult, Grant, JobEvent } from '../../types.js';
import { inBatches } from '../batches.js';
import type { WorkflowMemory } from '../handoff-facts.js';
import { recordEvents } from '../job-events.js';
import { MEMORY, v8JobId, v8OperationId } from '../plan.js';
import { POLICY_V8, V8_LEASE_MS, v8Worker, workflowOf } from './plan.js';
import { compactV8 } from './v8-compaction.js';

/** A v8 job holding its grant with the commit it has prepared but not sent. */
export interface InFlightJob {
  scope: string;
  fence: number;
  request: CommitRequest;
}

async function startJob(
  gate: Fencegate,
  scope: string,
  index: number,
  percent: number,
): Promise<InFlightJob> {
  const workflow = workflowOf(scope);
  const grant: Grant = await gate.acquire({
    scope,
    holder: v8Worker(index),
    ttlMs: V8_LEASE_MS,
    policyVersion: POLICY_V8.version,
    job: { jobId: v8JobId(workflow), attempt: 1, states: ['running'] },
  });
  const record = await gate.getRecord(scope, MEMORY);
  return {
    scope,
    fence: grant.fence,
    request: {
      scope,
      fence: grant.fence,
      operationId: v8OperationId(workflow),
      taskId: v8JobId(workflow),
      policyVersion: POLICY_V8.version,
      writes: [
        {
          name: MEMORY,
          expectRevision: record.revision,
          value: compactV8(record.value as WorkflowMemory, percent),
        },
      ],
    },
  };
}

/**
 * Runs a v8 job on every scope: those in `inFlight` stop before their commit and are answered,
 * the others commit and release. Returns the jobs left in flight.
 */
export async function runV8Jobs(
  gate: Fencegate,
  scopes: readonly string[],
  inFlight: ReadonlySet<string>,
  percent: number,
  batchSize: number,
  onBatch: (done: number) => void,
): Promise<InFlightJob[]> {
  const held: InFlightJob[] = [];
  await inBatches(
    scopes.map((scope, index) => ({ scope, index })),
    batchSize,
    async ({ scope, index }) => {
      const job = await startJob(gate, scope, index, percent);
      if (inFlight.has(scope)) {
        held.push(job);
        return;
      }
      const jobId = job.request.taskId!;
      const result = await gate.commit({
        ...job.request,
        release: true,
        job: { jobId, attempt: 1, states: ['succeeded'] },
      });
      if (result.outcome !== 'committed') {
        fail('internal_error', `the v8 job on ${scope} was rejected: ${result.error.code}`);
      }
    },
    onBatch,
  );
  return held;
}

/**
 * The in-flight jobs resume and send the commit they prepared; a job whose commit is refused
 * reports itself failed to the jobs ledger, as a queue integration would.
 */
export async function resumeInFlight(
  gate: Fencegate,
  jobs: readonly InFlightJob[],
  batchSize: number,
): Promise<CommitResult[]> {
  const results = await inBatches(jobs, batchSize, (job) => gate.commit(job.request));
  const failed: JobEvent[] = [];
  results.forEach((result, i) => {
    const job = jobs[i]!;
    failed.push({
      jobId: job.request.taskId!,
      scope: job.scope,
      policyVersion: POLICY_V8.version,
      fence: job.fence,
      state: result.outcome === 'committed' ? 'succeeded' : 'failed',
      attempt: 1,
    });
  });
  await recordEvents(gate, failed);
  return results;
}

/** The v8-only worker that asks for a fresh lease once the operator has acted. */
export const FRESH_V8_WORKER = 'v8-worker-fresh';

/** A v8-only worker asks for a fresh lease on a scope; answers the refusal code, or 'granted'. */
export async function acquireFreshV8Lease(gate: Fencegate, scope: string): Promise<string> {
  try {
    const grant = await gate.acquire({
      scope,
      holder: FRESH_V8_WORKER,
      ttlMs: V8_LEASE_MS,
      policyVersion: POLICY_V8.version,
    });
    await gate.release({ scope, holder: FRESH_V8_WORKER, fence: grant.fence });
    return 'granted';
  } catch (error) {
    if (isFencegateError(error)) return error.code;
    throw error;
  }
}
