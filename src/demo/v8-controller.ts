/**
 * The new generation: the v8 controller holds every affected workflow through the cutover's
 * fence. For each one it reads the current memory, compacts it keeping every handoff fact, checks
 * that before committing, and commits against the revision it read, so the snapshot it checked is
 * still the current one when the write lands. Some deliveries are duplicated by the queue: the
 * same request under the same operationId, answered `replayed`.
 */
import type { Fencegate } from '../gate.js';
import { fail } from '../errors.js';
import type { CommitRequest, CommitResult, JobEvent } from '../types.js';
import { inBatches } from './batches.js';
import { compactV8, missingFacts, type WorkflowMemory } from './handoff-facts.js';
import { recordEvents } from './job-events.js';
import {
  MEMORY,
  POLICY_V8,
  v8JobId,
  v8OperationId,
  type IncidentPlan,
  type V7Job,
} from './plan.js';

export interface ControllerOutcome {
  committed: number;
  rejected: number;
  /** Answers to the duplicated deliveries that said `replayed: true`. */
  replayed: number;
}

async function compactOne(
  gate: Fencegate,
  plan: IncidentPlan,
  job: V7Job,
  fence: number,
): Promise<{ first: CommitResult; retry: CommitResult | null }> {
  const record = await gate.getRecord(job.scope, MEMORY);
  const memory = record.value as WorkflowMemory;
  const candidate = compactV8(memory);
  const missing = missingFacts(memory.facts, candidate);
  if (missing.length > 0) {
    fail('internal_error', `v8 compaction of ${job.scope} lost ${missing.length} handoff facts`);
  }
  const request: CommitRequest = {
    scope: job.scope,
    fence,
    operationId: v8OperationId(job.workflow),
    taskId: v8JobId(job.workflow),
    policyVersion: POLICY_V8.version,
    writes: [{ name: MEMORY, expectRevision: record.revision, value: candidate }],
  };
  // A redelivered message races the original: both reach the store, one compaction happens.
  const first = gate.commit(request);
  const retry = plan.retried.has(job.workflow) ? gate.commit(request) : null;
  const [firstResult, retryResult] = await Promise.all([first, retry]);
  return { first: firstResult, retry: retryResult };
}

export async function compactAffected(
  gate: Fencegate,
  plan: IncidentPlan,
  fences: ReadonlyMap<string, number>,
  batchSize: number,
  onBatch: (done: number) => void,
): Promise<ControllerOutcome> {
  const outcomes = await inBatches(
    plan.jobs,
    batchSize,
    (job) => compactOne(gate, plan, job, fences.get(job.scope) ?? 0),
    onBatch,
  );
  const events: JobEvent[] = [];
  let committed = 0;
  let rejected = 0;
  let replayed = 0;
  outcomes.forEach(({ first, retry }, i) => {
    const job = plan.jobs[i]!;
    const ok = first.outcome === 'committed' || retry?.outcome === 'committed';
    if (ok) committed += 1;
    else rejected += 1;
    if (retry?.replayed === true) replayed += 1;
    const base = {
      jobId: v8JobId(job.workflow),
      scope: job.scope,
      policyVersion: POLICY_V8.version,
      fence: fences.get(job.scope) ?? 0,
    };
    events.push({ ...base, state: 'running', attempt: 1 });
    if (retry !== null) events.push({ ...base, state: 'retrying', attempt: 2 });
    events.push({ ...base, state: ok ? 'succeeded' : 'failed', attempt: retry === null ? 1 : 2 });
  });
  await recordEvents(gate, events);
  return { committed, rejected, replayed };
}
