/**
 * Store time. Lease expiry and every timestamp that decides authority come from a Clock owned by
 * the store (or the database's own clock), never from a worker. Tests inject a manual clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The host's wall clock: the one place in the library that reads Date.now(). */
export const systemClock: Clock = { now: () => Date.now() };
