/**
 * Whose fence a commit presented. Every grant (an acquire of a new fence, a takeover, a cutover
 * step) records its fence's holder, once; a commit's audit entry names that holder, accepted or
 * rejected, so a stale commit is attributed to the retired holder that made it, not to the
 * scope's current holder. A fence never granted (above the current one, or one a cancel or delete
 * issued) names no holder.
 */
export interface FenceGrant {
  holder: string;
}

export function holderOfFence(
  scope: { fence: number; holder: string | null } | null,
  fence: number,
  grantOf: (fence: number) => FenceGrant | null,
): string | null {
  // Only a grant gives a scope a holder, and renewals keep it: the current fence with a holder is
  // that holder's (also when it was granted before grants were recorded). No lookup needed.
  if (scope !== null && scope.fence === fence && scope.holder !== null) return scope.holder;
  // Fences only grow, and a scope row outlives its deletion: a fence above the scope's, or on a
  // scope never created, was never granted. Not reading it spares a stale commit a lookup.
  if (scope === null || fence > scope.fence) return null;
  return grantOf(fence)?.holder ?? null;
}
