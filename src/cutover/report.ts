/**
 * The drain-and-reconcile report of a cutover, computed from the authoritative history: the jobs
 * ledger for the old generation's jobs, and the audit log for what happened to commits after each
 * scope was moved. `staleAccepted` counts commits accepted on a moved scope with a fence older
 * than the one the cutover gave it; the fence rule makes it 0, and this report checks it.
 *
 * The audit part is a fold over the entries after the cutover's start, kept per store between
 * calls: each call reads only the entries appended since the last one (a panel refreshing every
 * few seconds costs the new entries, not the whole history again), a page at a time with the
 * event loop given back between pages.
 */
import { auditPages } from '../audit/audit-pages.js';
import type { Store } from '../store/store.js';
import { JOB_STATES, type AuditEntry, type CutoverReport, type JobState } from '../types.js';

/** What the audit log said about one cutover, through `afterSeq`. */
interface AuditTally {
  afterSeq: number;
  /** scope -> the fence the cutover gave it, once its cutover entry was read. */
  moved: Map<string, number>;
  staleAttempts: number;
  staleAccepted: number;
  liveCommits: number;
  staleRejectedByReason: Record<string, number>;
}

/** Tallies kept per store; beyond this many the least recently asked for is dropped. */
const TALLIES_KEPT = 1000;
const talliesByStore = new WeakMap<Store, Map<string, AuditTally>>();

export async function buildCutoverReport(
  store: Store,
  tenant: string,
  cutoverId: string,
): Promise<CutoverReport | null> {
  const cutover = await store.getCutover(tenant, cutoverId);
  const key = `${tenant}\u0000${cutoverId}`;
  const tallies = talliesOf(store);
  if (cutover === null) {
    tallies.delete(key);
    return null;
  }
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

  let tally = tallies.get(key);
  tallies.delete(key);
  // A cutover re-created under the same id (after a store was reset) starts a new fold.
  if (tally === undefined || tally.afterSeq < cutover.startSeq) tally = newTally(cutover.startSeq);
  for await (const entries of auditPages(store, tenant, tally.afterSeq)) {
    for (const entry of entries) fold(tally, entry, cutoverId, cutoverFence);
    tally.afterSeq = entries.at(-1)!.seq;
  }
  tallies.set(key, tally);
  if (tallies.size > TALLIES_KEPT) tallies.delete(tallies.keys().next().value!);

  return {
    cutoverId,
    toPolicy: cutover.toPolicy,
    holder: cutover.holder,
    status: cutover.status,
    scopes: cutover.planned,
    startedAt: cutover.startedAt,
    completedAt: cutover.completedAt,
    oldJobs: { total, byState },
    staleAttempts: tally.staleAttempts,
    staleAccepted: tally.staleAccepted,
    staleRejectedByReason: { ...tally.staleRejectedByReason },
    liveCommits: tally.liveCommits,
    skipped: cutover.skipped,
  };
}

function talliesOf(store: Store): Map<string, AuditTally> {
  let tallies = talliesByStore.get(store);
  if (tallies === undefined) {
    tallies = new Map();
    talliesByStore.set(store, tallies);
  }
  return tallies;
}

function newTally(startSeq: number): AuditTally {
  return {
    afterSeq: startSeq,
    moved: new Map(),
    staleAttempts: 0,
    staleAccepted: 0,
    liveCommits: 0,
    staleRejectedByReason: {},
  };
}

function fold(
  tally: AuditTally,
  entry: AuditEntry,
  cutoverId: string,
  cutoverFence: ReadonlyMap<string, number>,
): void {
  const scope = entry.scope;
  if (scope === null) return;
  if (entry.kind === 'cutover' && entry.reason === cutoverId) {
    // The cutover record read at this call may predate a step the log already shows.
    const fence = cutoverFence.get(scope) ?? entry.currentFence;
    if (fence !== null) tally.moved.set(scope, fence);
    return;
  }
  if (entry.kind !== 'commit' || entry.fence === null) return;
  const movedTo = tally.moved.get(scope);
  if (movedTo === undefined) return;
  if (entry.fence < movedTo) {
    tally.staleAttempts += 1;
    if (entry.outcome === 'committed') tally.staleAccepted += 1;
    else {
      const reason = entry.reason ?? 'unknown';
      tally.staleRejectedByReason[reason] = (tally.staleRejectedByReason[reason] ?? 0) + 1;
    }
  } else if (entry.outcome === 'committed') {
    tally.liveCommits += 1;
  }
}
