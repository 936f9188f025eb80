/**
 * Retry delays: exponential from `initialMs`, capped at `maxMs`, with jitter that only shortens a
 * delay, so the documented bounds (the first retry within 1 s, never more than the cap) hold.
 */
import { fail } from '../errors.js';

export interface BackoffOptions {
  /** The first delay; at most 1000 ms. Default 500. */
  initialMs?: number;
  /** The cap. Default 30,000. */
  maxMs?: number;
  /** 0 to 1: each delay is shortened by a random fraction of up to this much. Default 0.2. */
  jitter?: number;
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
  jitter: number;
}

export const MAX_INITIAL_BACKOFF_MS = 1000;
export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000, jitter: 0.2 };
/** The store refuses a retryAfterMs beyond a day. */
const MAX_DELAY_MS = 86_400_000;

export function normalizeBackoff(options: BackoffOptions = {}): Backoff {
  const backoff: Backoff = {
    initialMs: options.initialMs ?? DEFAULT_BACKOFF.initialMs,
    maxMs: options.maxMs ?? DEFAULT_BACKOFF.maxMs,
    jitter: options.jitter ?? DEFAULT_BACKOFF.jitter,
  };
  if (!isIntegerIn(backoff.initialMs, 0, MAX_INITIAL_BACKOFF_MS)) {
    fail(
      'invalid_request',
      `backoff.initialMs must be an integer from 0 to ${MAX_INITIAL_BACKOFF_MS}`,
      {
        field: 'backoff.initialMs',
      },
    );
  }
  if (!isIntegerIn(backoff.maxMs, backoff.initialMs, MAX_DELAY_MS)) {
    fail('invalid_request', `backoff.maxMs must be an integer from initialMs to ${MAX_DELAY_MS}`, {
      field: 'backoff.maxMs',
    });
  }
  if (!(Number.isFinite(backoff.jitter) && backoff.jitter >= 0 && backoff.jitter <= 1)) {
    fail('invalid_request', 'backoff.jitter must be a number from 0 to 1', {
      field: 'backoff.jitter',
    });
  }
  return backoff;
}

/**
 * The delay before retry number `n` (1 for the first retry): initialMs * 2^(n-1), capped, then
 * shortened by up to `jitter` of itself. `random` returns a number in [0, 1).
 */
export function backoffDelay(backoff: Backoff, n: number, random: () => number): number {
  const exponent = Math.max(0, Math.min(n - 1, 52));
  const base = Math.min(backoff.maxMs, backoff.initialMs * 2 ** exponent);
  return Math.round(base * (1 - backoff.jitter * clampUnit(random())));
}

function clampUnit(value: number): number {
  return Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
}

function isIntegerIn(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}
