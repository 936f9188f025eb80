import type { Clock } from '../core/clock.js';

/** A store clock that moves only when a test moves it. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('a manual clock only moves forward');
    this.#now += ms;
    return this.#now;
  }

  set(ms: number): void {
    this.#now = ms;
  }
}
