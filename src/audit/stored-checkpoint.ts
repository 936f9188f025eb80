/**
 * The verified checkpoint a store keeps once audit retention pruned entries through it
 * (Store.saveVerifiedCheckpoint): the server's own verification continues from it, since the
 * entries before it are gone, and so does it after a restart.
 */
import type { Store } from '../store/store.js';
import { fail } from '../errors.js';
import { parseCheckpoint, type VerifyCheckpoint } from './checkpoint.js';

/**
 * The checkpoint to continue from when the store's audit log was pruned; null when nothing was
 * pruned. Throws invalid_request when entries were pruned and the store kept no checkpoint
 * covering them (pruned by an earlier version).
 */
export async function prunedLogCheckpoint(store: Store): Promise<VerifyCheckpoint | null> {
  const pruned = (await store.auditPrunedThrough?.()) ?? 0;
  if (pruned === 0) return null;
  const json = (await store.loadVerifiedCheckpoint?.()) ?? null;
  const checkpoint = json === null ? null : parseCheckpoint(JSON.parse(json));
  if (checkpoint === null || (checkpoint.lastSeq ?? 0) < pruned) {
    fail(
      'invalid_request',
      `audit entries through seq ${pruned} were pruned and the store kept no checkpoint covering them; verify with the checkpoint that did (fencegate verify --checkpoint FILE)`,
    );
  }
  return checkpoint;
}

/**
 * One tenant's part of a checkpoint of every tenant: its scopes, delivered effects and delivery
 * attempts, at the same last seq. The counts of every tenant are not the tenant's: a retention
 * checkpoint found no violation, and entries checked start again from 0.
 */
export function tenantPart(checkpoint: VerifyCheckpoint, tenant: string): VerifyCheckpoint {
  return {
    ...checkpoint,
    tenant,
    checked: 0,
    scopes: checkpoint.scopes.filter((scope) => scope[0] === tenant),
    delivered: checkpoint.delivered.filter((delivered) => delivered[0] === tenant),
    attempts: (checkpoint.attempts ?? []).filter((attempt) => attempt[0] === tenant),
  };
}
