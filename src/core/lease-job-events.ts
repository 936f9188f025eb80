/**
 * The jobs ledger events a lease operation carries (types.ts LeaseJobEvents): one per state, in
 * order, under the operation's scope and fence and the scope's policy version. Every store records
 * them in the transaction of the operation, and only when it succeeds.
 */
import type { JobEvent, LeaseJobEvents } from '../types.js';

export interface LeaseGeneration {
  scope: string;
  fence: number;
  /** The scope's policy version; none, no events. */
  policyVersion: string | null;
}

export function leaseJobEvents(
  job: LeaseJobEvents | undefined,
  generation: LeaseGeneration,
): JobEvent[] {
  const { policyVersion } = generation;
  if (job === undefined || policyVersion === null) return [];
  return job.states.map((state) => ({
    jobId: job.jobId,
    scope: generation.scope,
    policyVersion,
    fence: generation.fence,
    state,
    attempt: job.attempt,
  }));
}
