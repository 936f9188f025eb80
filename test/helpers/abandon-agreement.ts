/**
 * The property every interleaving of a commit and an abandon of its operationId must keep:
 * abandon's answer and the store agree. Answered committed: the commit applied (its record exists,
 * it is the stored outcome). Answered operation_abandoned: the commit was answered that same
 * rejection as a replay and never applied (no record, no accepted audit entry).
 */
import { expect } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import type { CommitResult } from '../../src/types.js';

export async function expectAgreement(
  gate: Fencegate,
  scope: string,
  operationId: string,
  abandon: CommitResult,
  commit: CommitResult,
): Promise<'committed' | 'abandoned'> {
  const record = await gate.getRecord(scope, operationId);
  expect(await gate.getOperation(operationId)).toEqual(abandon);
  if (abandon.outcome === 'committed') {
    expect(commit).toEqual({ ...abandon, replayed: commit.replayed });
    expect(record.exists).toBe(true);
    return 'committed';
  }
  expect(abandon.error.code).toBe('operation_abandoned');
  expect(commit).toEqual({ ...abandon, replayed: true });
  expect(record.exists).toBe(false);
  const accepted = (await gate.audit({ kind: 'commit', outcome: 'committed' })).items.filter(
    (entry) => entry.operationId === operationId,
  );
  expect(accepted).toEqual([]);
  return 'abandoned';
}
