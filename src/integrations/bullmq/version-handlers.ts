/**
 * Workers by policy version: a processor with one handler per version it runs, and the hand-back
 * of a job whose scope runs a version this worker does not, to that version's queue.
 *
 * A worker that has both versions (prompt or config versions in one process) acquires naming both
 * (`policyVersions`) and runs the handler of the version the grant says. A fleet that runs one
 * version per queue (blue/green) is answered `policy_mismatch` for a scope of the other version;
 * `details.currentPolicyVersion` names the queue the job belongs to, and the job is added there
 * under an id made from its own, so a hand-back sent twice (the run died between the add and the
 * job's completion) adds it once.
 */
import type { Job, JobsOptions } from 'bullmq';
import { FencegateError } from '../../errors.js';
import { escapeName } from '../name-escape.js';
import { recordQueuedJobs } from './job-ledger.js';

/** The part of a BullMQ Queue a hand-back uses: `add`, as a Queue has it. */
export interface HandBackQueue {
  readonly name: string;
  add(name: string, data: unknown, opts?: JobsOptions): Promise<Job>;
}

/** What a handed-back job completes with in its first queue: where it went. */
export interface HandedBack {
  handedBackTo: { policyVersion: string; queue: string; jobId: string };
}

export function isHandedBack(value: unknown): value is HandedBack {
  return typeof value === 'object' && value !== null && 'handedBackTo' in value;
}

/** The handler versions in the order given: the first pins a new scope outside any rollout. */
export function handlerVersions(handlers: Record<string, unknown>): string[] {
  const versions = Object.keys(handlers);
  if (versions.length === 0) {
    throw new FencegateError(
      'invalid_request',
      'handlers must name at least one policy version, e.g. { v7: runV7, v8: runV8 }',
      { field: 'handlers' },
    );
  }
  for (const version of versions) {
    if (typeof handlers[version] !== 'function') {
      throw new FencegateError('invalid_request', `handlers.${version} must be a function`, {
        field: `handlers.${version}`,
      });
    }
  }
  return versions;
}

/** The version a `policy_mismatch` says runs the scope, or null for another refusal. */
export function mismatchVersion(error: unknown): string | null {
  if (!(error instanceof FencegateError) || error.code !== 'policy_mismatch') return null;
  const current = error.details.currentPolicyVersion;
  return typeof current === 'string' ? current : null;
}

/**
 * The hand-back's job id: the first queue's name and the job's id, so the same job handed back
 * again is the same job in the target queue (BullMQ adds a job id once). BullMQ refuses `:` in a
 * custom id, and escapeName keeps it: it is escaped here as escapeName escapes other bytes.
 */
export function handBackJobId(job: Pick<Job, 'queueName' | 'id'>): string {
  const id = `${escapeName(job.queueName)}.${escapeName(job.id ?? '')}`;
  return id.replaceAll(':', '@3A');
}

/** The options of the job that carry over to its copy: its retries and its retention. */
function carriedOptions(job: Job): JobsOptions {
  const { attempts, backoff, priority, removeOnComplete, removeOnFail } = job.opts;
  const carried: JobsOptions = {};
  if (attempts !== undefined) carried.attempts = attempts;
  if (backoff !== undefined) carried.backoff = backoff;
  if (priority !== undefined) carried.priority = priority;
  if (removeOnComplete !== undefined) carried.removeOnComplete = removeOnComplete;
  if (removeOnFail !== undefined) carried.removeOnFail = removeOnFail;
  return carried;
}

/**
 * Adds the job to the queue of `version`, recorded `queued` in the jobs ledger under the scope's
 * current fence (so a rollout's or cutover's report counts it there), and says where it went.
 * Nothing of the job was written: its acquire was refused.
 */
export async function handBack(
  gate: Parameters<typeof recordQueuedJobs>[0],
  job: Job,
  scope: string,
  version: string,
  queue: HandBackQueue,
): Promise<HandedBack> {
  const jobId = handBackJobId(job);
  const added = await queue.add(job.name, job.data, { ...carriedOptions(job), jobId });
  await recordQueuedJobs(gate, [added], { scope: () => scope, policyVersion: version });
  return { handedBackTo: { policyVersion: version, queue: queue.name, jobId } };
}

/** A job whose version has neither a handler here nor a queue to go to. */
export function noVersionHere(scope: string, version: string, known: string[]): FencegateError {
  return new FencegateError(
    'policy_mismatch',
    `scope ${scope} runs policy ${version}; this worker has handlers for ${known.join(', ')} and no queue for ${version} in versionQueues`,
    { scope, currentPolicyVersion: version },
  );
}
