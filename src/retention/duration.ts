/** Durations as operators write them: a whole number and a unit, `30m`, `12h`, `7d`. */
import { fail } from '../errors.js';
import { requireOutcomeWindow } from './retention.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,9})(ms|s|m|h|d)$/;

export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  const unit = match?.[2] === undefined ? undefined : UNITS[match[2]];
  if (match?.[1] === undefined || unit === undefined) {
    return fail(
      'invalid_request',
      `"${text}" is not a duration: write a number and ms, s, m, h or d (7d, 12h)`,
    );
  }
  return Number(match[1]) * unit;
}

/** A `--keep-outcomes` window: a duration of at least the floor (retention.ts). */
export function parseOutcomeWindow(text: string): number {
  const ms = parseDuration(text);
  requireOutcomeWindow(ms, 'the window');
  return ms;
}
