/**
 * Tampering with a copy of a valid audit history the way a faulty store would: one wrong
 * decision, after which the store carries on consistently from the state it wrongly produced.
 * That is why most helpers also shift the numbers of the entries that follow the fault.
 */
import type { AuditEntry } from '../../src/types.js';

export function copy(entries: readonly AuditEntry[]): AuditEntry[] {
  return structuredClone(entries) as AuditEntry[];
}

export function indexOf(
  entries: readonly AuditEntry[],
  match: (entry: AuditEntry) => boolean,
): number {
  const index = entries.findIndex(match);
  if (index < 0) throw new Error('no such entry in the history');
  return index;
}

export function commitIndex(
  entries: readonly AuditEntry[],
  operationId: string,
  tenant = 'acme',
): number {
  return indexOf(
    entries,
    (e) => e.kind === 'commit' && e.operationId === operationId && e.tenant === tenant,
  );
}

/** A rejected commit turned into an accepted one: each write gets the revision after `actual`. */
export function acceptCommit(entry: AuditEntry): void {
  entry.outcome = 'committed';
  entry.reason = null;
  for (const record of entry.records ?? []) {
    record.resulting = record.actual + 1;
    record.fingerprint = 'tampered';
  }
}

/**
 * Later writes of one record continue from a revision `delta` away from the real one, and later
 * reads of it (dependencies of commits in any scope) saw that revision.
 */
export function shiftRecord(
  entries: AuditEntry[],
  afterIndex: number,
  at: { tenant: string; scope: string; name: string },
  delta: number,
): void {
  for (let i = afterIndex + 1; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.tenant !== at.tenant) continue;
    for (const read of entry.reads ?? []) {
      if (read.scope !== at.scope || read.name !== at.name) continue;
      read.expected += delta;
      read.actual += delta;
    }
    if (entry.scope !== at.scope || entry.records === null) continue;
    for (const record of entry.records) {
      if (record.name !== at.name) continue;
      record.actual += delta;
      if (record.resulting !== null) {
        record.expected += delta;
        record.resulting += delta;
      }
    }
  }
}

/** Later fences of one scope from `atLeast` on are `delta` away from the real ones. */
export function shiftFences(
  entries: AuditEntry[],
  afterIndex: number,
  at: { tenant: string; scope: string },
  atLeast: number,
  delta: number,
): void {
  for (let i = afterIndex + 1; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.tenant !== at.tenant || entry.scope !== at.scope) continue;
    if (entry.fence !== null && entry.fence >= atLeast) entry.fence += delta;
    if (entry.currentFence !== null && entry.currentFence >= atLeast) entry.currentFence += delta;
  }
}

/**
 * A rejected commit attributed to `holder` instead of the holder its fence was granted to (what
 * a store that names the scope's current holder, not the fence's, writes).
 */
export function misattribute(entry: AuditEntry, holder: string | null): void {
  entry.holder = holder;
}
