/**
 * An operator's cancel of a scope: fence + 1, no holder, and the scope's pending intents
 * cancelled. The fence step is one transaction with the first page of the intents
 * (cancel-intents-page.ts: at most CANCEL_INTENTS_PAGE of them, fewer where one transaction holds
 * less); the rest follow in later transactions, a page each, under the fence the step issued. So a
 * scope holding any number of intents is cancelled on every store, and one holding a page or fewer
 * is cancelled in one transaction, as before.
 *
 * The fence step alone takes write authority away: from it on, no commit under an older fence is
 * accepted, so no intent joins the range the pages cancel (every intent committed under a fence
 * older than the step's). The pages only finish what the step decided. Between two pages a
 * dispatcher may claim an intent the next page would have cancelled: it is then left to its
 * delivery, not cancelled and not counted. A page sent again cancels nothing more, since only a
 * pending intent is cancelled.
 */
import type { CancelResult } from '../../types.js';
import { auditEntry } from '../audit-entry.js';
import { cancelIntentsPage, type CancelPageBounds } from '../cancel-intents-page.js';
import type { FencegateError } from '../../errors.js';
import { tokenField, type Caller } from '../grant-token.js';
import { checkActive, nextFence } from '../lease-rules.js';
import { cancelPageIntents } from './plan-cancel-page.js';
import { refusal, scopeRef } from './plan-leases.js';
import type { Snapshot, Transition } from './transition.js';

/** What one transaction of a cancel did, and where the next page starts (null: none). */
export interface CancelPageResult extends CancelResult {
  /** The intents this transaction cancelled. */
  cancelledIntents: number;
  nextCursor: string | null;
}

/** The fence step, with the first page of the scope's intents. */
export function planCancel(
  snapshot: Snapshot,
  scope: string,
  reason: string | undefined,
  caller?: Caller,
  bounds: CancelPageBounds = {},
): Transition<CancelPageResult> {
  const row = snapshot.get({ type: 'scope', scope });
  const error = checkActive(scope, row);
  if (error !== null || row === null) {
    return refusal(snapshot, 'cancel', scope, row, error as FencegateError, caller);
  }
  const fence = nextFence(row);
  const page = cancelIntentsPage(snapshot, scope, { from: 0, before: fence }, undefined, bounds);
  const cancels = cancelPageIntents(snapshot, page.intents, fence, null);
  return {
    // The range too: the first page is chosen from every intent the scope holds at the step.
    expect: [scopeRef(scope), { type: 'scopeIntents', scope }, ...cancels.expect],
    put: [
      {
        type: 'scope',
        scope,
        row: { ...row, fence, holder: null, leaseExpiresAt: null, updatedAt: snapshot.now },
      },
      ...cancels.put,
    ],
    audit: [
      auditEntry({
        at: snapshot.now,
        tenant: snapshot.tenant,
        scope,
        kind: 'cancel',
        outcome: 'ok',
        reason: reason ?? null,
        policyVersion: row.policyVersion,
        currentFence: fence,
        ...tokenField(caller),
      }),
      ...cancels.audit,
    ],
    answer: {
      ok: true,
      value: { fence, cancelledIntents: cancels.cancelled.length, nextCursor: page.nextCursor },
    },
  };
}

/**
 * A later page of the cancel that issued `fence`: the scope's intents committed under an older
 * fence, after `cursor`. It expects neither the scope's row nor its range as a whole, so a worker
 * that acquired the scope since the step (and commits under a newer fence, outside the range)
 * never makes a page plan again.
 */
export function planCancelPage(
  snapshot: Snapshot,
  scope: string,
  fence: number,
  cursor: string | undefined,
  bounds: CancelPageBounds = {},
): Transition<CancelPageResult> {
  const page = cancelIntentsPage(snapshot, scope, { from: 0, before: fence }, cursor, bounds);
  const cancels = cancelPageIntents(snapshot, page.intents, fence, null);
  return {
    expect: cancels.expect,
    put: cancels.put,
    audit: cancels.audit,
    answer: {
      ok: true,
      value: { fence, cancelledIntents: cancels.cancelled.length, nextCursor: page.nextCursor },
    },
  };
}
