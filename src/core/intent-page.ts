/**
 * The byte budget (answer-budget.ts) of the answers that list intents: a page of GET /v1/intents
 * and a claim. An intent counts the bytes of its payload's JSON, the one field of its of a size
 * the committer chose (up to maxValueBytes each). A page ends early and carries a cursor; a claim
 * takes fewer intents than its limit, at least one, and leaves the rest due for the next claim.
 */
import type { Intent, IntentStatus, ListIntentsQuery } from '../types.js';
import { jsonValueBytes } from './answer-budget.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT } from './limits.js';

/** A validated intent listing with its defaults filled in, ready for a store's read. */
export interface IntentPageQuery {
  scope?: string;
  status?: IntentStatus;
  /** The effect key the page starts after; '' for the first page. */
  after: string;
  limit: number;
  /** Bytes of payloads the page holds at most past its first intent. */
  maxBytes: number;
}

export function resolveIntentPage(
  query: ListIntentsQuery,
  after: string,
  maxBytes: number = DEFAULT_LIMITS.maxPageBytes,
): IntentPageQuery {
  const { cursor: _cursor, ...filters } = query;
  return { ...filters, after, limit: query.limit ?? DEFAULT_LIST_LIMIT, maxBytes };
}

/** What an intent spends of an answer's budget: the UTF-8 bytes of its payload's JSON. */
export function intentBytes(intent: Pick<Intent, 'payload'>): number {
  return jsonValueBytes(intent.payload);
}
