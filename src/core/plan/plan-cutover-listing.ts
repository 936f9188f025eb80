/**
 * A cutover over a prefix, a rollout's step and a rollout's rollback list their scopes in pages,
 * after a start that lists nothing: one transaction per page, each reading at most `limit` names
 * from where the previous one stopped, adding the ones that qualify to the cutover's list and
 * moving the listing's position on. Listing a whole selection in one transaction reads and locks
 * every scope under it (100,000 rows run past PostgreSQL's statement timeout; etcd holds 128 per
 * Txn); a page holds a bounded number whatever the selection's size. The chunks move the list
 * once it is complete (plan-cutover.ts).
 *
 * Why a list built over several transactions keeps the rollout's rule, that every scope of the
 * selection ends up on the version the hash gives it:
 *
 * - A scope that exists when the step starts and is still on fromPolicy (or on none) when the
 *   listing reaches it is listed; the chunk moves it if it is still so then (plan-rollout-moves.ts).
 * - A scope an acquire creates or pins while the list is built is pinned by the hash: the step's
 *   start stored its percent among the active rollouts in the same transaction that recorded the
 *   step, so every acquire after it pins by that percent, before or after the listing's position.
 *   The listing passes it over (it is on toPolicy or stays on fromPolicy as the hash says).
 * - The set only grows: a page adds names after the last one, and never takes one away.
 *
 * So a page needs no lock on the names it did not list: it expects the cutover, its cursor and
 * the rollout, which every other page of the same list writes or reads, so two senders of one
 * page never both add it, and a crash between two pages leaves the list as the last page left it.
 */
import {
  cutoverCursorPut,
  cutoverCursorRef,
  readRollout,
  rolloutKey,
  rolloutRef,
  rolloutScopesPrefix,
  type CutoverListing,
} from '../rollout-rows.js';
import { admits, parseRolloutCutoverId, rolloutCutoverFingerprint } from '../rollout-rules.js';
import {
  cutoverUpdate,
  type CutoverRow,
  type RangeRef,
  type Ref,
  type Snapshot,
  type Transition,
} from './transition.js';

/** What one page examined, and which of those it lists. */
interface Page {
  examined: string[];
  listed: string[];
  /** Whether names may follow the page: false once it reached the end of what it lists. */
  more: boolean;
  expect: Ref[];
}

/**
 * How many names a page examines: of a range (a prefix's scopes, a rollout's marks), whose rows a
 * store reads with the range; of a list (a rollout's `scopes`), each read by its own key.
 */
export interface PageSizes {
  range: number;
  list: number;
}

/**
 * Lists the next page of a cutover whose list is still being built, and answers how many names it
 * examined (at least 1, so that the caller sends the next chunk: the listing's end is not the
 * cutover's). The last page ends the listing: the cursor then has none, and chunks move.
 */
export function planListingPage(
  snapshot: Snapshot,
  cutover: CutoverRow,
  listing: CutoverListing,
  sizes: PageSizes,
): Transition<number> {
  const { cutoverId } = cutover;
  const page = pageOf(snapshot, cutover, listing, sizes);
  const last = page.examined.at(-1);
  const next: CutoverListing | undefined =
    page.more && last !== undefined ? { ...listing, after: last } : undefined;
  // The last page leaves the chunks to read the list a page at a time, from its start.
  const put = [
    cutoverCursorPut(
      cutoverId,
      next === undefined ? { next: 0, after: '' } : { next: 0, listing: next },
    ),
  ];
  if (page.listed.length > 0) {
    put.push(cutoverUpdate(cutover, {}, page.listed));
  }
  return {
    expect: [{ type: 'cutover', cutoverId }, cutoverCursorRef(cutoverId), ...page.expect],
    put,
    audit: [],
    answer: { ok: true, value: Math.max(page.examined.length, 1) },
  };
}

function pageOf(
  snapshot: Snapshot,
  cutover: CutoverRow,
  listing: CutoverListing,
  sizes: PageSizes,
): Page {
  const limit = sizes.range;
  if (listing.of === 'prefix') {
    const examined = snapshot.list(pageRange('scopes', listing.prefix, listing.after, limit));
    return {
      examined,
      listed: examined.filter(
        (scope) => snapshot.get({ type: 'scope', scope })?.status === 'active',
      ),
      more: examined.length === limit,
      expect: [],
    };
  }
  const owner = parseRolloutCutoverId(cutover.cutoverId);
  const ours =
    owner !== null &&
    cutover.requestFingerprint === rolloutCutoverFingerprint(owner.rolloutId, owner.step);
  if (!ours) return ended([]);
  const expect = [rolloutRef(rolloutKey(owner.rolloutId))];
  const rollout = readRollout(snapshot, owner.rolloutId);
  if (rollout === null) return ended(expect);
  if (listing.of === 'rollback') {
    // Every scope the rollout moved or pinned: no more join once its rollback began.
    const prefix = rolloutScopesPrefix(rollout.rolloutId);
    const after = listing.after === '' ? '' : prefix + listing.after;
    const keys = snapshot.list(pageRange('rolloutKeys', prefix, after, limit));
    const examined = keys.map((key) => key.slice(prefix.length));
    return { examined, listed: examined, more: keys.length === limit, expect };
  }
  // A step whose rollout began rolling back (or moved on) lists no more: it moves nothing more.
  const stepping =
    (rollout.status === 'running' || rollout.status === 'paused') && rollout.step === owner.step;
  if (!stepping) return ended(expect);
  const { selection } = rollout;
  let examined: string[];
  let more: boolean;
  if ('scopes' in selection) {
    // A list selection (sorted, at most 1,000 names) is paged over the list itself.
    const rest = selection.scopes.filter((scope) => scope > listing.after);
    examined = rest.slice(0, sizes.list);
    more = rest.length > sizes.list;
  } else {
    examined = snapshot.list(pageRange('scopes', selection.prefix, listing.after, limit));
    more = examined.length === limit;
  }
  const listed = examined.filter((scope) => {
    if (!admits(rollout.rolloutId, scope, listing.percent)) return false;
    const row = snapshot.get({ type: 'scope', scope });
    // A listed name not created yet is created by its move; a prefix lists only scopes that exist.
    if (row === null) return 'scopes' in selection;
    // A scope the rollout moved or pinned is on toPolicy: only fromPolicy's and unpinned ones.
    return (
      row.status === 'active' &&
      (row.policyVersion === null || row.policyVersion === rollout.fromPolicy)
    );
  });
  return { examined, listed, more, expect };
}

/** A listing that ends here, adding nothing. */
function ended(expect: Ref[]): Page {
  return { examined: [], listed: [], more: false, expect };
}

function pageRange(
  of: 'scopes' | 'rolloutKeys',
  prefix: string,
  after: string,
  limit: number,
): RangeRef {
  return { type: 'page', of: { type: of, prefix }, after, limit };
}
