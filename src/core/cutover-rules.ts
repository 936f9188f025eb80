/** Rules every store applies to a cutover request, whatever its adapter. */
import { canonicalJson, sha256Hex } from './canonical.js';
import type { CutoverRequest } from '../types.js';

/** Scopes moved per transaction: other writers run between the chunks of a large cutover. */
export const CUTOVER_CHUNK = 1000;

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
