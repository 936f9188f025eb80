/**
 * A client option that must be a number within bounds, checked when the client is made: NaN or a
 * value out of range would otherwise surface later as a client that never stops waiting, or that
 * sends each commit of a batch alone.
 */
export function requireRange(
  name: string,
  value: number,
  min: number,
  max: number,
  whole = false,
): number {
  if (
    !(typeof value === 'number' && value >= min && value <= max) ||
    (whole && !Number.isInteger(value))
  ) {
    const kind = whole ? 'a whole number' : 'a number';
    throw new RangeError(`${name} must be ${kind} from ${min} to ${max}, not ${String(value)}`);
  }
  return value;
}

/** The smallest body limit a client takes: below it no commit with a record would fit. */
export const MIN_BODY_BYTES = 1024;
