/** A page of intents by effect key for every store: the budget's cut (core/intent-page.ts), then the cursor. */
import { pageWithinBudget } from '../core/answer-budget.js';
import { encodeIntentCursor, intentBytes, type IntentPageQuery } from '../core/intent-page.js';
import type { Intent, Page } from '../types.js';

/**
 * The page of the intents a store read in effect key order after the page's start: those within
 * the limit and the budget. A store reads one intent more than the page holds to learn that
 * another page follows.
 */
export function intentPage(read: readonly Intent[], page: IntentPageQuery): Page<Intent> {
  const { items, more } = pageWithinBudget(read, page.limit, page.maxBytes, intentBytes);
  const last = items.at(-1);
  return {
    items,
    nextCursor: more && last !== undefined ? encodeIntentCursor(last.effectKey) : null,
  };
}
