/**
 * Paging the audit log in seq order within the byte budget (answer-budget.ts). An entry counts
 * the bytes of its JSON as answered: its record changes and dependency reads make an entry of a
 * large commit tens of KiB, so a page of many such entries ends early and carries nextAfterSeq
 * like a page cut by its limit. One rule for every store and every reader of the log.
 */
import type { AuditEntry, AuditOutcome, AuditKind, AuditPage, AuditQuery } from '../types.js';
import { jsonValueBytes, pageWithinBudget } from './answer-budget.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT } from './limits.js';

/** The most entries one page holds whatever it asks: the readers of the whole log ask for 1000. */
export const MAX_AUDIT_PAGE = 10_000;

/** A validated audit query with its defaults filled in, ready for a store's read. */
export interface AuditPageQuery {
  scope?: string;
  kind?: AuditKind;
  outcome?: AuditOutcome;
  afterSeq: number;
  limit: number;
  /** Bytes of entries the page holds at most past its first entry. */
  maxBytes: number;
}

export function resolveAuditPage(
  query: AuditQuery,
  maxBytes: number = DEFAULT_LIMITS.maxPageBytes,
): AuditPageQuery {
  return {
    ...query,
    afterSeq: query.afterSeq ?? 0,
    limit: Math.min(query.limit ?? DEFAULT_LIST_LIMIT, MAX_AUDIT_PAGE),
    maxBytes,
  };
}

/** What an entry spends of a page's budget: the UTF-8 bytes of its JSON. */
export function auditEntryBytes(entry: AuditEntry): number {
  return jsonValueBytes(entry);
}

/**
 * The page of the entries a store read in seq order after the page's start: those within the
 * limit and the budget. A store reads one entry more than the page holds to learn that another
 * page follows.
 */
export function auditPage(read: readonly AuditEntry[], page: AuditPageQuery): AuditPage {
  const { items, more } = pageWithinBudget(read, page.limit, page.maxBytes, auditEntryBytes);
  const last = items.at(-1);
  return { items, nextAfterSeq: more && last !== undefined ? last.seq : null };
}
