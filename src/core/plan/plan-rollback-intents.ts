/**
 * A rollout's rollback with `cancelIntents`: the pending intents each scope it moved back committed
 * under toPolicy are cancelled in pages that trail its moves, so a scope holding any number of
 * them is rolled back on every store.
 *
 * The rollback's cutover moves a chunk of scopes in one transaction (fence + 1 each: from then on
 * no commit under toPolicy's fences is accepted on them, so no intent joins what the pages
 * cancel). Before it moves the next chunk, the intents of the scopes it moved are cancelled, a page
 * a transaction; the cutover completes, and the rollout is marked rolled back, only once the last
 * page is done. Each page stores how far the pages have come in the cutover's cursor, in its own
 * transaction, and expects the cursor unchanged: a page never applies twice, and a rollback
 * interrupted between two pages resumes at the next one when it is sent again or its driver
 * continues it. An intent a dispatcher claimed before its page is left to its delivery, not
 * cancelled and not counted.
 *
 * A page visits the moved scopes from its cursor in list order. It visits at most `chunk` of them
 * and spends at most a page's budget (CANCEL_INTENTS_PAGE, less where one transaction holds
 * less): one unit per intent it looks at, two per scope it visits (a scope reads its step row and
 * its rollout mark, where an intent reads one key and writes two). Most scopes hold a few intents,
 * so one page settles many of them.
 */
import { jsonValueBytes } from '../answer-budget.js';
import {
  CANCEL_INTENTS_PAGE,
  cancelIntentsPage,
  type CancelPageBounds,
} from '../cancel-intents-page.js';
import { cutoverCursorPut, type IntentsCursor } from '../rollout-rows.js';
import { cancelPageIntents } from './plan-cancel-page.js';
import type { RollbackIntents } from './plan-rollout-moves.js';
import {
  cutoverList,
  type CutoverRow,
  type Put,
  type RangeRef,
  type Ref,
  type Snapshot,
  type Transition,
} from './transition.js';
import type { NewAuditEntry } from '../audit-entry.js';

/** What visiting one scope costs of a page's budget, in intents looked at. */
const SCOPE_UNITS = 2;

export interface RollbackIntentsPage {
  cutover: CutoverRow;
  intents: RollbackIntents;
  /** The cutover's scopes before this index are moved back (or skipped). */
  moved: number;
  /** The last name the chunks handled, for a list built in pages; kept in the cursor. */
  listAfter: string | undefined;
  /** Where this page starts. */
  from: IntentsCursor;
  /** The most scopes one page visits: the cutover's chunk. */
  chunk: number;
  bounds: CancelPageBounds;
  /** What the chunk read to come here: the cutover, its cursor, the rollout. */
  expect: (Ref | RangeRef)[];
}

/** Where a rollback's pages start: its cursor, or the first listed scope. */
export function intentsCursorOf(cursor: { intents?: IntentsCursor }): IntentsCursor {
  return cursor.intents ?? { next: 0, after: null };
}

/**
 * The moved scopes a page may visit, from index `from.next` on: read as a page of the list after
 * the last scope finished when the list was built in pages (a rollback's always is; reading the
 * whole list on each of thousands of pages cost n² reads), or cut from the list a cursor of an
 * older build points into by index.
 */
function movedNamesFrom(snapshot: Snapshot, page: RollbackIntentsPage): string[] {
  const { cutover, from } = page;
  const count = Math.min(page.chunk, page.moved - from.next);
  if (count <= 0) return [];
  if (page.listAfter !== undefined && (from.next === 0 || from.lastScope !== undefined)) {
    return snapshot.list({
      type: 'page',
      of: { type: 'cutoverScopes', cutoverId: cutover.cutoverId },
      after: from.lastScope ?? '',
      limit: count,
    });
  }
  return cutoverList(snapshot, cutover).slice(from.next, from.next + count);
}

/** The next page; answers how many scopes it visited, 1 at least, so its caller goes on. */
export function planRollbackIntentsPage(
  snapshot: Snapshot,
  page: RollbackIntentsPage,
): Transition<number> {
  const { cutover, intents, moved, chunk } = page;
  const expect = [...page.expect];
  const put: Put[] = [];
  const audit: NewAuditEntry[] = [];
  let units = Math.min(CANCEL_INTENTS_PAGE, page.bounds.maxCancels ?? Infinity);
  let bytes = page.bounds.maxCancelBytes ?? Infinity;
  let { next, after, lastScope } = page.from;
  const names = movedNamesFrom(snapshot, page);
  let visited = 0;
  while (next < moved && visited < chunk) {
    // Past the first scope, room for the scope and one intent of it.
    if (visited > 0 && units < SCOPE_UNITS + 1) break;
    const scope = names[next - page.from.next]!;
    visited += 1;
    units -= SCOPE_UNITS;
    const stepRef = { type: 'cutoverStep' as const, cutoverId: cutover.cutoverId, scope };
    const step = snapshot.get(stepRef);
    expect.push(stepRef);
    const target =
      step === null || step.skipped === true ? null : intents.fencesOf(scope, step.fence);
    if (target !== null) expect.push(...target.expect);
    if (step === null || target === null || target.fences === null) {
      next += 1;
      after = null;
      lastScope = scope;
      continue;
    }
    // No intent joins these fences once the scope moved back, so the range itself is not
    // expected: a worker of fromPolicy committing on the scope meanwhile changes nothing here.
    const found = cancelIntentsPage(snapshot, scope, target.fences, after ?? undefined, {
      maxCancels: Math.max(1, units),
      maxCancelBytes: bytes,
    });
    const first = found.intents[0];
    // A later scope's first intent that would pass the page's bytes waits for the next page.
    if (visited > 1 && first !== undefined && jsonValueBytes(first.payload) > bytes) break;
    const cancels = cancelPageIntents(snapshot, found.intents, step.fence, intents.reason);
    expect.push(...cancels.expect);
    put.push(...cancels.put);
    audit.push(...cancels.audit);
    units -= found.intents.length;
    for (const intent of found.intents) bytes -= jsonValueBytes(intent.payload);
    if (found.nextCursor !== null) {
      after = found.nextCursor;
      break;
    }
    next += 1;
    after = null;
    lastScope = scope;
  }
  put.push(
    cutoverCursorPut(cutover.cutoverId, {
      next: moved,
      after: page.listAfter,
      intents: lastScope === undefined ? { next, after } : { next, after, lastScope },
    }),
  );
  return { expect, put, audit, answer: { ok: true, value: Math.max(1, visited) } };
}
