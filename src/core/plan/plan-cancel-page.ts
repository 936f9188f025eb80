/**
 * The rows and audit entries of one page of cancellations (cancel-intents-page.ts chooses the
 * page): every cancel of pending intents writes them through here, the holder's `cancelIntents`,
 * an operator's cancel of a scope and a rollout's rollback with `cancelIntents`.
 *
 * Only a `pending` intent is cancelled. One a dispatcher claimed is being delivered, and one that
 * ended (delivered, failed, cancelled) stays as it ended: cancellation is ordered against delivery
 * by the store, since every intent the page looked at is expected unchanged when it applies, so a
 * claim that lands first makes the page plan again and leave that intent.
 */
import type { Intent } from '../../types.js';
import { auditEntry, type NewAuditEntry } from '../audit-entry.js';
import type { Put, Ref, Snapshot } from './transition.js';

export interface PageCancels {
  expect: Ref[];
  put: Put[];
  audit: NewAuditEntry[];
  /** The effect keys this page cancels, in the page's order. */
  cancelled: string[];
  /** The effect keys of the page's intents cancelled before it. */
  cancelledBefore: string[];
}

/**
 * Cancels the page's pending intents under the scope's `fence` (each audit entry's
 * `currentFence`), each audited with `reason`.
 */
export function cancelPageIntents(
  snapshot: Snapshot,
  intents: readonly Intent[],
  fence: number,
  reason: string | null,
): PageCancels {
  const cancels: PageCancels = {
    expect: [],
    put: [],
    audit: [],
    cancelled: [],
    cancelledBefore: [],
  };
  for (const intent of intents) {
    const { effectKey } = intent;
    cancels.expect.push({ type: 'intent', effectKey });
    if (intent.status === 'cancelled') cancels.cancelledBefore.push(effectKey);
    if (intent.status !== 'pending') continue;
    cancels.put.push({
      type: 'intent',
      effectKey,
      row: { ...intent, status: 'cancelled', updatedAt: snapshot.now },
    });
    cancels.audit.push(
      auditEntry({
        at: snapshot.now,
        tenant: snapshot.tenant,
        scope: intent.scope,
        kind: 'intent',
        outcome: 'cancelled',
        reason,
        currentFence: fence,
        effectKey,
      }),
    );
    cancels.cancelled.push(effectKey);
  }
  return cancels;
}
