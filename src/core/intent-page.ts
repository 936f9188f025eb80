/**
 * The byte budget (answer-budget.ts) of the answers that list intents: a page of GET /v1/intents
 * and a claim. An intent counts the bytes of its JSON as answered, like an audit entry: besides
 * its payload (up to maxValueBytes), its effect key, scope, operation id, target, claimedBy,
 * providerRef and lastError are of a size the caller chose, so a thousand intents of tiny payloads
 * can hold megabytes. A page ends early and carries a cursor; a claim takes fewer intents than its
 * limit, at least one, and leaves the rest due for the next claim.
 */
import { fail } from '../errors.js';
import type { Intent, IntentStatus, ListIntentsQuery } from '../types.js';
import { jsonValueBytes } from './answer-budget.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT, NAME_PATTERN } from './limits.js';

/** A validated intent listing with its defaults filled in, ready for a store's read. */
export interface IntentPageQuery {
  scope?: string;
  status?: IntentStatus;
  /** The effect key the page starts after; '' for the first page. */
  after: string;
  limit: number;
  /** Bytes of intents' JSON the page holds at most past its first intent. */
  maxBytes: number;
}

export function resolveIntentPage(
  query: ListIntentsQuery,
  maxBytes: number = DEFAULT_LIMITS.maxPageBytes,
): IntentPageQuery {
  const { cursor, ...filters } = query;
  const after = cursor === undefined ? '' : decodeIntentCursor(cursor);
  return { ...filters, after, limit: query.limit ?? DEFAULT_LIST_LIMIT, maxBytes };
}

/** A page's cursor: the effect key of its last intent, base64url so it survives a query string. */
export function encodeIntentCursor(effectKey: string): string {
  return Buffer.from(effectKey, 'utf8').toString('base64url');
}

/**
 * The effect key a cursor names; invalid_request for any other string. A cursor that decodes to
 * no effect key never came from a page: read as one, it would start the listing over or end it.
 */
export function decodeIntentCursor(cursor: string): string {
  const effectKey = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!NAME_PATTERN.test(effectKey) || encodeIntentCursor(effectKey) !== cursor) {
    fail(
      'invalid_request',
      'cursor must be the nextCursor of an earlier page of intents, passed as it was answered',
      { field: 'cursor' },
    );
  }
  return effectKey;
}

/** What an intent spends of an answer's budget: the UTF-8 bytes of its JSON as answered. */
export function intentBytes(intent: Intent): number {
  return jsonValueBytes(intent);
}
