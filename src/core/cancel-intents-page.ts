/**
 * The page of a cancel of superseded runs' intents (`cancelIntents`, `POST
 * /v1/leases/cancel-intents`). Its range is the scope's intents committed under a fence from
 * `committedFrom` up to, not including, the holder's; a page looks at the range's next intents in
 * effect-key order after its cursor, at most CANCEL_INTENTS_PAGE of them, and cancels the pending
 * ones in one store transaction. It reads the scope's intents from its cursor on, never the
 * scope's whole list again, so a scope that ever held any number of intents is cancelled page
 * by page, each page within what one transaction of every store holds.
 *
 * A page asked again is the same page: no intent joins the range while the holder holds its fence
 * (a commit under an older fence is refused), an intent's fence and payload never change, and a
 * page counts every intent of the range it looks at, whatever its status. So a page resent after a
 * lost reply looks at the same intents, changes nothing more and answers the same.
 */
import { fail } from '../errors.js';
import type { CancelIntentsResult, Intent } from '../types.js';
import { jsonValueBytes } from './answer-budget.js';
import { decodeIntentCursor, encodeIntentCursor } from './intent-page.js';
import type { Snapshot } from './plan/transition.js';

/**
 * The most intents of the range one page looks at. 50, so a page fits one etcd transaction at
 * etcd's default --max-txn-ops (128): cancelling an intent writes two keys (the intent and its
 * open-intent head), so 50 cancellations and the page's audit key are 101 operations, and the
 * compares (each intent looked at, the scope, the range, the audit key) stay near 54. SQLite and
 * PostgreSQL hold far more, but one bound for every store keeps a page's work and its answer the
 * same wherever it runs. A store whose transaction is smaller cuts a page shorter (its
 * `maxCancels`, `maxCancelBytes`); a page always looks at one intent at least, so a caller that
 * follows `nextCursor` always moves on.
 */
export const CANCEL_INTENTS_PAGE = 50;

/** What one store transaction holds of a page, beyond CANCEL_INTENTS_PAGE. */
export interface CancelPageBounds {
  /** The most intents one transaction cancels (infinite when it is unbounded). */
  maxCancels?: number | undefined;
  /** The payload bytes one transaction rewrites (infinite when it is unbounded). */
  maxCancelBytes?: number | undefined;
}

/** The fences whose intents a cancel may touch: from `from` up to, not including, `before`. */
export interface FenceRange {
  from: number;
  before: number;
}

export interface CancelIntentsPage {
  /** The intents of the range the page looks at, in effect-key order. */
  intents: Intent[];
  /** The cursor after the page's last intent; null when no intent of the range follows it. */
  nextCursor: string | null;
}

export function inFenceRange(intent: Intent, range: FenceRange): boolean {
  return intent.fence >= range.from && intent.fence < range.before;
}

/**
 * The most intents a page passes over, of each kind it does not count: those under a fence older
 * than the range's (a holder's `committedFrom` leaves its older runs' intents be), and those under
 * the range's end or a newer fence (committed since the range was fixed: the holder's own, or a
 * worker's after an operator's fence step). A page that passed over this many of either ends
 * there, with a cursor after the last intent it read, so a page reads at most CANCEL_INTENTS_PAGE
 * + 2 × CANCEL_PAGE_LOOK + 1 intents whatever the scope holds, and the pages of a cancel read the
 * scope's intents about once in all.
 */
export const CANCEL_PAGE_LOOK = 4 * CANCEL_INTENTS_PAGE;

/**
 * The page after `cursor` (the start when absent). It reads the scope's intents in effect-key
 * order from its cursor on, a page's worth at a time (a paged range, so a store reads only those),
 * and stops at the first of:
 * - the intent after its last one, once it holds its limit, or one whose payload passes its bytes
 *   (then its cursor is after its last intent);
 * - CANCEL_PAGE_LOOK intents of either kind it passes over (then its cursor is after the last
 *   intent it read, which it may not hold);
 * - the scope's last intent (then it answers no cursor).
 * Intents outside the fence range are passed over, not held. An intent under an older fence
 * never joins the scope, and fences and payloads never change, so a page asked again stops where
 * it stopped the first time. Only intents under newer fences can join its keys meanwhile: they
 * change nothing unless CANCEL_PAGE_LOOK of them are then among its keys, when it ends sooner and
 * the pages after it cancel the rest.
 */
export function cancelIntentsPage(
  snapshot: Snapshot,
  scope: string,
  fences: FenceRange,
  cursor: string | undefined,
  bounds: CancelPageBounds = {},
): CancelIntentsPage {
  const start = cursor === undefined ? '' : decodeIntentCursor(cursor);
  const limit = Math.max(1, Math.min(CANCEL_INTENTS_PAGE, bounds.maxCancels ?? Infinity));
  const maxBytes = bounds.maxCancelBytes ?? Infinity;
  const intents: Intent[] = [];
  let bytes = 0;
  let older = 0;
  let newer = 0;
  let after = start;
  for (;;) {
    // One more than the page holds: most pages end within their first read.
    const keys = snapshot.list({
      type: 'page',
      of: { type: 'scopeIntents', scope },
      after,
      limit: limit + 1,
    });
    for (const effectKey of keys) {
      const intent = snapshot.get({ type: 'intent', effectKey });
      after = effectKey;
      if (intent === null) continue;
      if (!inFenceRange(intent, fences)) {
        if (intent.fence < fences.from) older += 1;
        else newer += 1;
        if (older < CANCEL_PAGE_LOOK && newer < CANCEL_PAGE_LOOK) continue;
        return { intents, nextCursor: encodeIntentCursor(effectKey) };
      }
      const size = jsonValueBytes(intent.payload);
      const full = intents.length === limit || (intents.length > 0 && bytes + size > maxBytes);
      if (full) return { intents, nextCursor: encodeIntentCursor(intents.at(-1)!.effectKey) };
      intents.push(intent);
      bytes += size;
    }
    if (keys.length <= limit) return { intents, nextCursor: null };
  }
}

/**
 * Every page from `first` on (the start when absent), in turn, until one answers no `nextCursor`:
 * the effect keys each page cancelled, in key order. Each page is a call of its own; one cut short
 * by an error leaves the pages before it done, and the same call again redoes them unchanged.
 */
export async function cancelEveryPage(
  page: (cursor: string | undefined) => Promise<CancelIntentsResult>,
  first?: string,
): Promise<string[]> {
  const cancelled: string[] = [];
  let cursor = first;
  for (;;) {
    const answer = await page(cursor);
    cancelled.push(...answer.cancelled);
    if (answer.nextCursor === null) return cancelled;
    // A cursor that does not move on would ask the same page forever.
    if (answer.nextCursor === cursor) {
      fail('internal_error', 'a page of cancelIntents answered the cursor it was sent with', {
        cursor,
      });
    }
    cursor = answer.nextCursor;
  }
}
