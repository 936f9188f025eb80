/**
 * An intent row as the planner tests store it: pending, due now, never attempted, committed on
 * scope wf-1 under `fence`; `fields` replaces any of it.
 */
import type { Intent } from '../../src/types.js';

export function intentRow(effectKey: string, fence: number, fields: Partial<Intent> = {}): Intent {
  return {
    effectKey,
    scope: 'wf-1',
    target: 'mail',
    payload: {},
    status: 'pending',
    attempts: 0,
    fence,
    operationId: 'op',
    claimFence: 0,
    providerRef: null,
    lastError: null,
    createdAt: 0,
    updatedAt: 0,
    unknownOutcomes: 0,
    claimedBy: null,
    claimExpiresAt: null,
    nextAttemptAt: 0,
    ...fields,
  };
}
