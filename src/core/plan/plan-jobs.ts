/**
 * The jobs ledger planned over a snapshot: the events a job queue reports, and those a lease
 * operation carries (core/lease-job-events.ts).
 */
import type { JobEvent } from '../../types.js';
import type { Put, Ref, Snapshot, Transition } from './transition.js';

/** A job keeps its latest state: an event older than the stored one changes nothing. */
export function planJobEvents(snapshot: Snapshot, events: JobEvent[]): Transition<void> {
  const latest = new Map<string, Put & { type: 'job' }>();
  const expect: Ref[] = [];
  for (const event of events) {
    const at = event.at ?? snapshot.now;
    const ref = { type: 'job' as const, jobId: event.jobId };
    const stored = latest.get(event.jobId)?.row ?? snapshot.get(ref);
    if (!latest.has(event.jobId)) expect.push(ref);
    if (stored !== null && at < stored.at) continue;
    latest.set(event.jobId, {
      ...ref,
      row: {
        jobId: event.jobId,
        scope: event.scope,
        policyVersion: event.policyVersion,
        fence: event.fence,
        state: event.state,
        attempt: event.attempt,
        at,
      },
    });
  }
  return { expect, put: [...latest.values()], audit: [], answer: { ok: true, value: undefined } };
}
