/** Retry delays: exponential, capped, jitter only shortens, bounds validated. */
import { describe, expect, it } from 'vitest';
import { backoffDelay, normalizeBackoff } from '../../src/dispatch/index.js';

describe('backoff', () => {
  it('doubles from initialMs up to maxMs', () => {
    const backoff = normalizeBackoff({ initialMs: 250, maxMs: 3000, jitter: 0 });
    expect([1, 2, 3, 4, 5, 6, 100].map((n) => backoffDelay(backoff, n, () => 0.5))).toEqual([
      250, 500, 1000, 2000, 3000, 3000, 3000,
    ]);
  });

  it('jitter shortens a delay by at most its fraction, never lengthens it', () => {
    const backoff = normalizeBackoff({ initialMs: 1000, maxMs: 30_000, jitter: 0.5 });
    expect(backoffDelay(backoff, 1, () => 0)).toBe(1000);
    expect(backoffDelay(backoff, 1, () => 0.99)).toBe(505);
    expect(backoffDelay(backoff, 10, () => 0.5)).toBe(22_500);
    expect(backoffDelay(backoff, 1, () => Number.NaN)).toBe(1000);
  });

  it('defaults: first delay within a second, capped at 30 s', () => {
    expect(normalizeBackoff()).toEqual({ initialMs: 500, maxMs: 30_000, jitter: 0.2 });
  });
});
