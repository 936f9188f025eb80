/** Rules every store applies to a cutover request, whatever its adapter. */
import { canonicalJson, sha256Hex } from './canonical.js';
import { fail } from '../errors.js';
import type { CutoverRequest } from '../types.js';

/** Scopes moved per transaction: other writers run between the chunks of a large cutover. */
export const CUTOVER_CHUNK = 1000;

/**
 * The chunk a store opened with a `cutoverChunk` option moves (tests only: a test that kills a
 * cutover between two chunks needs a few small ones, not thousands of scopes). A whole number
 * from 1 to CUTOVER_CHUNK; CUTOVER_CHUNK when absent.
 */
export function cutoverChunkOf(option: number | undefined): number {
  if (option === undefined) return CUTOVER_CHUNK;
  if (!Number.isInteger(option) || option < 1 || option > CUTOVER_CHUNK) {
    return fail(
      'invalid_request',
      `cutoverChunk must be a whole number from 1 to ${CUTOVER_CHUNK}; leave it out for ${CUTOVER_CHUNK}`,
    );
  }
  return option;
}

/**
 * What makes two cutover requests the same: the scope list as a set (an operator resuming a
 * cutover may send it in another order), never the free-text reason.
 */
export function cutoverFingerprint(request: CutoverRequest): string {
  return sha256Hex(
    canonicalJson({
      toPolicy: request.toPolicy,
      holder: request.holder,
      scopes: request.scopes === undefined ? null : [...new Set(request.scopes)].sort(),
      prefix: request.prefix ?? null,
      leaseTtlMs: request.leaseTtlMs ?? null,
    }),
  );
}
