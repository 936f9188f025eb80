/**
 * Audit reads. Each write Txn stores its entries for one tenant under one new key; an entry's seq
 * is that key's create revision × AUDIT_SLOTS + its position in the Txn. Keys are read in create
 * revision order from the revision of `afterSeq` on. etcd serves a range filtered by create
 * revision or sorted by anything but the key by reading the whole range and sorting it, so every
 * read costs the tenant's (for verification, the store's) whole audit range: a page asks for as
 * many keys as it needs entries (each key holds at least one), so an unfiltered page is one such
 * read, not one per 64 keys.
 */
import { SortOrder, SortTarget } from 'etcd3';
import type { IKeyValue } from 'etcd3';
import type { NewAuditEntry } from '../../core/audit-entry.js';
import { itemsWithinBudget } from '../../core/answer-budget.js';
import {
  auditEntryBytes,
  auditPage,
  resolveAuditPage,
  type AuditPageQuery,
} from '../../core/audit-page.js';
import type { AuditEntry, AuditPage, AuditQuery } from '../../types.js';
import type { EtcdConnection } from './etcd-connection.js';
import { AUDIT_SLOTS } from './etcd-engine.js';
import { prefixEnd } from './etcd-keys.js';

/**
 * Keys per read: at least as many as the page has entries (each key holds one Txn's entries for a
 * tenant, one or more), and no more than a few hundred, since a key may hold hundreds of entries.
 */
const MAX_KEYS_PER_READ = 256;

interface StoredAudit {
  offset: number;
  entries: NewAuditEntry[];
}

function entriesOf(kv: IKeyValue): AuditEntry[] {
  const stored = JSON.parse(kv.value.toString()) as StoredAudit;
  const base = Number(kv.create_revision) * AUDIT_SLOTS + stored.offset;
  return stored.entries.map((entry, i) => ({ seq: base + i, ...entry }));
}

function matches(entry: AuditEntry, query: AuditPageQuery): boolean {
  return (
    entry.seq > query.afterSeq &&
    (query.scope === undefined || entry.scope === query.scope) &&
    (query.kind === undefined || entry.kind === query.kind) &&
    (query.outcome === undefined || entry.outcome === query.outcome)
  );
}

/**
 * Reads until the entries found hold the page and one entry more, by count or by the page's byte
 * budget (core/audit-page.ts): a page of large entries stops reading early.
 */
export async function readAuditPage(
  connection: EtcdConnection,
  prefix: string,
  query: AuditQuery,
  maxBytes?: number,
): Promise<AuditPage> {
  const page = resolveAuditPage(query, maxBytes);
  const { limit, afterSeq } = page;
  const key = Buffer.from(prefix);
  const rangeEnd = prefixEnd(key);
  let fromRevision = Math.max(1, Math.floor(afterSeq / AUDIT_SLOTS));
  const found: AuditEntry[] = [];
  const sizes: number[] = [];
  for (;;) {
    const response = await connection.range({
      key,
      range_end: rangeEnd,
      sort_order: SortOrder.Ascend,
      sort_target: SortTarget.Create,
      min_create_revision: fromRevision,
      // One more than the page needs, and one more again: keys of the last revision read may be
      // incomplete and are read whole the next time.
      limit: Math.min(limit + 2, MAX_KEYS_PER_READ),
    });
    let kvs = response.kvs;
    const lastRevision = Number(kvs.at(-1)?.create_revision ?? 0);
    if (response.more && kvs.some((kv) => Number(kv.create_revision) !== lastRevision)) {
      // Keys of one Txn (one per tenant) share a revision: read the last revision whole next time.
      kvs = kvs.filter((kv) => Number(kv.create_revision) !== lastRevision);
    } else if (response.more) {
      kvs = (
        await connection.range({
          key,
          range_end: rangeEnd,
          min_create_revision: lastRevision,
          max_create_revision: lastRevision,
        })
      ).kvs;
    }
    const batch = kvs.flatMap(entriesOf).filter((entry) => matches(entry, page));
    batch.sort((a, b) => a.seq - b.seq);
    found.push(...batch);
    sizes.push(...batch.map(auditEntryBytes));
    if (itemsWithinBudget(sizes, limit, page.maxBytes) < found.length || !response.more) break;
    fromRevision = Math.max(...kvs.map((kv) => Number(kv.create_revision))) + 1;
  }
  return auditPage(found, page);
}
