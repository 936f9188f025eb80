/**
 * Tampering with a copy of a valid audit history the way a faulty store would: one wrong
 * decision, after which the store carries on consistently from the state it wrongly produced.
 * That is why most helpers also shift the numbers of the entries that follow the fault.
 */
import type { AuditEntry, AuditRecordChange } from '../../src/types.js';

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

/**
 * A rejected commit turned into an accepted one: each write gets the revision after `actual`. A
 * refusal decided by the scope row alone (a fence below the current one) was audited without its
 * records; `wrote` then gives the records it would have changed (`wouldWrite`).
 */
export function acceptCommit(entry: AuditEntry, wrote?: AuditRecordChange[]): void {
  entry.outcome = 'committed';
  entry.reason = null;
  if (entry.records === null && wrote !== undefined) entry.records = wrote;
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

/**
 * The record change a commit at `index` would have written to `name` in its scope, at the revision
 * the record had then (the last change before it, or 0): for `acceptCommit` of a refusal audited
 * without records.
 */
export function wouldWrite(
  entries: readonly AuditEntry[],
  index: number,
  name: string,
): AuditRecordChange[] {
  const at = entries[index]!;
  let revision = 0;
  for (const entry of entries.slice(0, index)) {
    if (entry.tenant !== at.tenant || entry.scope !== at.scope) continue;
    for (const record of entry.records ?? []) {
      if (record.name === name && record.resulting !== null) revision = record.resulting;
    }
  }
  return [
    {
      name,
      expected: revision,
      actual: revision,
      resulting: null,
      fingerprint: null,
      deleted: false,
    },
  ];
}
