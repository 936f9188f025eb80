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
  grant: FenceGrant | null,
  scope: { fence: number; holder: string | null } | null,
  fence: number,
): string | null {
  if (grant !== null) return grant.holder;
  // A current fence granted before grants were recorded: its holder is the scope's.
  return scope !== null && scope.fence === fence ? scope.holder : null;
}
