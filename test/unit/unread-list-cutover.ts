/**
 * A running cutover row whose list throws when a plan reads it whole: for the tests that a plan
 * reads a cutover's list only as pages. `names` is how many the list holds, for the message.
 */
import type { CutoverRow } from '../../src/core/plan/transition.js';

export function unreadListCutover(cutoverId: string, names: number): CutoverRow {
  return {
    cutoverId,
    requestFingerprint: 'f',
    toPolicy: 'v8',
    holder: 'operator',
    leaseTtlMs: null,
    reason: null,
    status: 'running',
    startedAt: 0,
    completedAt: null,
    startSeq: 0,
    get scopes(): string[] {
      throw new Error(`the plan read the cutover's whole list (${names} names)`);
    },
  };
}
