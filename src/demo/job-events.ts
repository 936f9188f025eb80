/** Reporting job lifecycle events to the jobs ledger, as a queue integration would. */
import type { Fencegate } from '../gate.js';
import type { JobEvent } from '../types.js';

/** The ledger takes at most this many events per call (HTTP-API.md, POST /v1/jobs/events). */
const EVENTS_PER_CALL = 1000;

/** Records events in order; a job's later event in the same list supersedes its earlier one. */
export async function recordEvents(gate: Fencegate, events: readonly JobEvent[]): Promise<void> {
  for (let start = 0; start < events.length; start += EVENTS_PER_CALL) {
    await gate.recordJobEvents(events.slice(start, start + EVENTS_PER_CALL));
  }
}
