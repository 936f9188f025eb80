/**
 * The jobs ledger planned over a snapshot: the events a job queue reports, and those a lease
 * operation carries (core/lease-job-events.ts).
 */
import type { JobEvent, JobRecord, JobState } from '../../types.js';
import type { Put, Ref, Snapshot, Transition } from './transition.js';

/** Where a state falls in one attempt's life: of two at one instant, the later one stands. */
const STATE_ORDER: Record<JobState, number> = {
  queued: 0,
  reserved: 1,
  running: 2,
  retrying: 3,
  succeeded: 4,
  failed: 4,
};

/**
 * Whether an event is later than the stored state: by its time, then its attempt, then its
 * state's place in an attempt. An event that ties on all three changes nothing, so a resent event
 * never undoes a later one reported for the same instant, in whatever order they arrive.
 */
function isLater(
  event: { at: number; attempt: number; state: JobState },
  stored: JobRecord,
): boolean {
  if (event.at !== stored.at) return event.at > stored.at;
  if (event.attempt !== stored.attempt) return event.attempt > stored.attempt;
  return STATE_ORDER[event.state] > STATE_ORDER[stored.state];
}

/**
 * A job keeps its latest state: an event older than the stored one changes nothing, and a timed
 * event (one a client may send again) changes it only when it is later (isLater).
 */
export function planJobEvents(snapshot: Snapshot, events: JobEvent[]): Transition<void> {
  const latest = new Map<string, Put & { type: 'job' }>();
  const expect: Ref[] = [];
  for (const event of events) {
    const at = event.at ?? snapshot.now;
    const ref = { type: 'job' as const, jobId: event.jobId };
    const stored = latest.get(event.jobId)?.row ?? snapshot.get(ref);
    if (!latest.has(event.jobId)) expect.push(ref);
    // An event without `at` is stamped now and never sent twice: it stands unless older.
    const stands =
      stored === null ||
      (event.at === undefined
        ? at >= stored.at
        : isLater({ at, attempt: event.attempt, state: event.state }, stored));
    if (!stands) continue;
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
