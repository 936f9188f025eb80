/**
 * The drain-and-reconcile report of a cutover, computed from the authoritative history: the jobs
 * ledger for the old generation's jobs, and the audit log for what happened to commits after each
 * scope was moved. `staleAccepted` counts commits accepted on a moved scope with a fence older
 * than the one the cutover gave it; the fence rule makes it 0, and this report checks it.
 */
import type { Store } from '../store/store.js';
import { JOB_STATES, type CutoverReport, type JobState } from '../types.js';

const AUDIT_PAGE = 5000;

export async function buildCutoverReport(
  store: Store,
  tenant: string,
  cutoverId: string,
): Promise<CutoverReport | null> {
  const cutover = await store.getCutover(tenant, cutoverId);
  if (cutover === null) return null;
  const cutoverFence = new Map(cutover.fences.map(({ scope, fence }) => [scope, fence]));

  const byState = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<
    JobState,
    number
  >;
  let total = 0;
  for (const job of await store.listJobs(tenant, [...cutoverFence.keys()])) {
    const fence = cutoverFence.get(job.scope);
    if (fence === undefined || job.fence >= fence) continue;
    byState[job.state] += 1;
    total += 1;
  }

  const moved = new Set<string>();
  let staleAttempts = 0;
  let staleAccepted = 0;
  let liveCommits = 0;
  const staleRejectedByReason: Record<string, number> = {};
  let afterSeq = cutover.startSeq;
  for (;;) {
    const page = await store.readAudit(tenant, { afterSeq, limit: AUDIT_PAGE });
    for (const entry of page.items) {
      const scope = entry.scope;
      if (scope === null || !cutoverFence.has(scope)) continue;
      if (entry.kind === 'cutover' && entry.reason === cutoverId) {
        moved.add(scope);
        continue;
      }
      if (entry.kind !== 'commit' || !moved.has(scope) || entry.fence === null) continue;
      if (entry.fence < (cutoverFence.get(scope) ?? 0)) {
        staleAttempts += 1;
        if (entry.outcome === 'committed') staleAccepted += 1;
        else {
          const reason = entry.reason ?? 'unknown';
          staleRejectedByReason[reason] = (staleRejectedByReason[reason] ?? 0) + 1;
        }
      } else if (entry.outcome === 'committed') {
        liveCommits += 1;
      }
    }
    if (page.nextAfterSeq === null) break;
    afterSeq = page.nextAfterSeq;
  }

  return {
    cutoverId,
    toPolicy: cutover.toPolicy,
    holder: cutover.holder,
    status: cutover.status,
    scopes: cutover.planned,
    startedAt: cutover.startedAt,
    completedAt: cutover.completedAt,
    oldJobs: { total, byState },
    staleAttempts,
    staleAccepted,
    staleRejectedByReason,
    liveCommits,
    skipped: cutover.skipped,
  };
}
