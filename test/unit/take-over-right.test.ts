/**
 * The take-over right's rules as core decides them, with no store and no server: which prefixes a
 * token request may carry, which scopes they cover, and the audit reason of a worker's takeover.
 * The HTTP answers built from them are checked in test/server/take-over-right.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_TAKE_OVER_PREFIXES,
  requireTakeOverPrefixes,
  takeOverAllowed,
  workerTakeoverReason,
} from '../../src/core/take-over-right.js';
import { MAX_REASON } from '../../src/core/validate.js';
import { isFencegateError } from '../../src/errors.js';

/** The code, field and message `run` refuses with. */
function refusal(run: () => unknown): { code: string; field: unknown; message: string } {
  try {
    run();
  } catch (error) {
    if (!isFencegateError(error)) throw error;
    return { code: error.code, field: error.details.field, message: error.message };
  }
  throw new Error('expected a refusal');
}

describe('the take-over right', () => {
  it('takes 1 to 32 scope names as prefixes on worker tokens only, each once', () => {
    expect(requireTakeOverPrefixes(undefined, 'operator')).toEqual([]);
    expect(requireTakeOverPrefixes(['a/', 'b/', 'a/'], 'worker')).toEqual(['a/', 'b/']);
    const many = Array.from({ length: MAX_TAKE_OVER_PREFIXES + 1 }, (_, i) => `p${i}/`);
    expect(requireTakeOverPrefixes(many.slice(1), 'worker')).toHaveLength(MAX_TAKE_OVER_PREFIXES);
    for (const [value, role, field, message] of [
      [['a/'], 'operator', 'mayTakeOver', /only for worker tokens/],
      [[], 'worker', 'mayTakeOver', /1 to 32 scope prefixes/],
      [many, 'worker', 'mayTakeOver', /1 to 32 scope prefixes/],
      ['a/', 'worker', 'mayTakeOver', /1 to 32 scope prefixes/],
      [['ok/', 'has space'], 'worker', 'mayTakeOver[1]', /^mayTakeOver\[1\]/],
    ] as const) {
      const refused = refusal(() => requireTakeOverPrefixes(value, role));
      expect(refused, JSON.stringify(value)).toMatchObject({ code: 'invalid_request', field });
      expect(refused.message).toMatch(message);
    }
  });

  it('covers a scope whose name starts with a prefix: a prefix of the name, not a path segment', () => {
    const prefixes = ['langgraph/', 'jobs/a'];
    expect(takeOverAllowed(prefixes, 'langgraph/thread-1')).toBe(true);
    expect(takeOverAllowed(prefixes, 'jobs/a-1')).toBe(true);
    expect(takeOverAllowed(prefixes, 'jobs/b')).toBe(false);
    expect(takeOverAllowed(prefixes, 'orders/langgraph/1')).toBe(false);
    expect(takeOverAllowed([], 'langgraph/thread-1')).toBe(false);
  });

  it("names the token in a worker's takeover reason, and refuses a reason that would not fit beside it", () => {
    expect(workerTakeoverReason('tok-1', undefined)).toBe('taken over by worker token tok-1');
    expect(workerTakeoverReason('tok-1', 'double text')).toBe(
      'taken over by worker token tok-1: double text',
    );
    const room = MAX_REASON - 'taken over by worker token tok-1'.length - 2;
    expect(workerTakeoverReason('tok-1', 'x'.repeat(room))).toHaveLength(MAX_REASON);
    const refused = refusal(() => workerTakeoverReason('tok-1', 'x'.repeat(room + 1)));
    expect(refused).toMatchObject({ code: 'invalid_request', field: 'reason' });
    expect(refused.message).toMatch(new RegExp(`at most ${room} characters`));
  });
});
