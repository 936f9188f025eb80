/**
 * Finished rollouts' documents (core/rollout-rows.ts): a completed or rolled-back rollout changes
 * no more, and no acquire, cutover or rollout reads it, so its state and what it did to each scope
 * may go once it has been finished for the window. Its step and rollback cutovers stay, with every
 * cutover (listCutovers), and the audit log keeps each move. Also every tenant's rollouts, for the
 * metrics of the active and recently finished ones.
 */
import { fail } from '../errors.js';
import type { RolloutRow } from '../core/rollout-rows.js';
import type { Store } from '../store/store.js';

/** How long a finished rollout is kept when no window is given: 30 days. */
export const DEFAULT_ROLLOUT_RETENTION_MS = 30 * 86_400_000;

export function isFinished(rollout: Pick<RolloutRow, 'status'>): boolean {
  return rollout.status === 'completed' || rollout.status === 'rolled_back';
}

/** Every tenant's rollouts, tenant after tenant; nothing from a store that cannot list them. */
export async function* everyTenantsRollouts(
  store: Store,
): AsyncGenerator<{ tenant: string; rollout: RolloutRow }> {
  if (store.nextRolloutTenant === undefined) return;
  let tenant = await store.nextRolloutTenant('');
  while (tenant !== null) {
    for (const rollout of await store.readRollouts(tenant)) yield { tenant, rollout };
    tenant = await store.nextRolloutTenant(tenant);
  }
}

/** Deletes the rollouts finished before `finishedBefore` (store time); how many went. */
export async function pruneFinishedRollouts(store: Store, finishedBefore: number): Promise<number> {
  if (store.deleteRollout === undefined || store.nextRolloutTenant === undefined) {
    return fail('invalid_request', `the ${store.kind} store does not support rollout retention`);
  }
  let deleted = 0;
  for await (const { tenant, rollout } of everyTenantsRollouts(store)) {
    if (!isFinished(rollout) || rollout.updatedAt >= finishedBefore) continue;
    await store.deleteRollout(tenant, rollout.rolloutId);
    deleted += 1;
  }
  return deleted;
}
