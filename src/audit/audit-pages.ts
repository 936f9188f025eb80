/**
 * The audit log read page by page in seq order, giving the event loop back between pages. An
 * embedded store (SQLite) reads each page synchronously: a replay of a long history in one go
 * would hold every other request (lease renewals included) until it ends. Between pages, the
 * requests waiting on the event loop go first.
 */
import { fail } from '../errors.js';
import type { Store } from '../store/store.js';
import type { AuditEntry } from '../types.js';

/** Entries a replay reads per store call unless told otherwise: a page is a few milliseconds. */
export const REPLAY_PAGE_SIZE = 1000;

/** Resolves after the I/O and timers already waiting have run. */
export function giveWay(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The entries after `afterSeq` (null: from the first), one page at a time. */
export async function* auditPages(
  store: Store,
  tenant: string | undefined,
  afterSeq: number | null,
  pageSize: number = REPLAY_PAGE_SIZE,
): AsyncGenerator<readonly AuditEntry[]> {
  let after = afterSeq;
  for (let first = true; ; first = false) {
    if (!first) await giveWay();
    const query = after === null ? { limit: pageSize } : { afterSeq: after, limit: pageSize };
    const page = await store.readAudit(tenant, query);
    if (page.items.length > 0) yield page.items;
    if (page.items.length === 0 || page.nextAfterSeq === null) return;
    if (after !== null && page.nextAfterSeq <= after) {
      // A store that pages backwards would loop forever; its history cannot be read in order.
      fail('internal_error', `readAudit did not advance past seq ${after}`);
    }
    after = page.nextAfterSeq;
  }
}
