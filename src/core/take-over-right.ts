/**
 * The take-over right of a worker token: a list of scope prefixes. A worker token created with it
 * may take over (claim from a live holder) a scope whose name starts with one of its prefixes, and
 * act as the holder of another token's grant there (grant-token.ts), and nothing else; operators
 * may take over any scope of their tenant, and only they re-create a deleted one (lease-rules.ts).
 * This module is the one place that decides which scopes the prefixes cover.
 */
import { fail } from '../errors.js';
import { MAX_REASON, requireName } from './validate.js';

/** At most this many prefixes on one token: a token names a few areas, not a scope list. */
export const MAX_TAKE_OVER_PREFIXES = 32;

/** Checks a token request's `mayTakeOver`: names as prefixes, only on worker tokens. */
export function requireTakeOverPrefixes(value: unknown, role: unknown): string[] {
  if (value === undefined) return [];
  if (role !== 'worker') {
    fail(
      'invalid_request',
      'mayTakeOver is only for worker tokens: an operator may take over any scope already; drop mayTakeOver or use role worker',
      { field: 'mayTakeOver' },
    );
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_TAKE_OVER_PREFIXES) {
    fail(
      'invalid_request',
      `mayTakeOver must be a list of 1 to ${MAX_TAKE_OVER_PREFIXES} scope prefixes`,
      { field: 'mayTakeOver' },
    );
  }
  const prefixes = value.map((prefix, i) => requireName(prefix, `mayTakeOver[${i}]`));
  return [...new Set(prefixes)];
}

/** Whether a token with these prefixes may take over `scope`. */
export function takeOverAllowed(prefixes: readonly string[], scope: string): boolean {
  return prefixes.some((prefix) => scope.startsWith(prefix));
}

/**
 * The audit reason of a worker's takeover: it names the token, then the caller's own reason. The
 * caller's reason is refused (not cut) when both would not fit in an audit reason.
 */
export function workerTakeoverReason(tokenId: string, reason: string | undefined): string {
  const named = `taken over by worker token ${tokenId}`;
  if (reason === undefined) return named;
  const room = MAX_REASON - named.length - 2;
  if (reason.length > room) {
    fail(
      'invalid_request',
      `reason of a worker's takeover must be at most ${room} characters: its audit entry also names the token`,
      { field: 'reason' },
    );
  }
  return `${named}: ${reason}`;
}
