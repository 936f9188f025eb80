/**
 * What the store says the ramp and the operator's answer did, loaded once for the checks: the
 * steps' and the rollback's cutovers, scope and record states, the in-flight jobs' commit entries,
 * the refused fresh acquire, the rollout report and the audit verifier's verdict.
 */
import { verifyStore } from '../../audit/verify.js';
import type { Fencegate } from '../../gate.js';
import { rollbackCutoverId, stepCutoverId } from '../../core/rollout-rules.js';
import type { AuditEntry, RecordState, RolloutReport, ScopeState } from '../../types.js';
import { groupBy, readAllAudit, readMemory, readScopes } from '../store-view.js';
import { ROLLOUT_ID } from './plan.js';

export interface RolloutStoreView {
  /** Each step's moved scopes with the fence it gave them, in step order. */
  steps: Map<string, number>[];
  /** The fences the rollback gave, or null when there was none. */
  rollback: Map<string, number> | null;
  scopes: Map<string, ScopeState>;
  memory: RecordState[];
  /** Commit entries after the last step began, by operationId. */
  commitsByOperation: Map<string, AuditEntry[]>;
  /** Refused acquires on the scope of the fresh v8 acquire. */
  refusedAcquires: AuditEntry[];
  report: RolloutReport | null;
  verified: { ok: boolean; checked: number; violations: number };
}

async function fencesOf(gate: Fencegate, cutoverId: string) {
  const cutover = await gate.store.getCutover(gate.tenant, cutoverId);
  if (cutover === null) return null;
  return {
    startSeq: cutover.startSeq,
    fences: new Map(cutover.fences.map(({ scope, fence }) => [scope, fence])),
  };
}

export async function loadRolloutView(
  gate: Fencegate,
  workflows: number,
  stepCount: number,
  freshAcquireScope: string,
): Promise<RolloutStoreView> {
  const steps: Map<string, number>[] = [];
  let lastStart = 0;
  for (let step = 1; step <= stepCount; step += 1) {
    const cutover = await fencesOf(gate, stepCutoverId(ROLLOUT_ID, step));
    steps.push(cutover?.fences ?? new Map<string, number>());
    lastStart = cutover?.startSeq ?? lastStart;
  }
  const commitsByOperation = groupBy(
    await readAllAudit(gate, { kind: 'commit', afterSeq: lastStart }),
    (entry) => entry.operationId,
  );
  const verified = await verifyStore(gate.store, { tenant: gate.tenant });
  return {
    steps,
    rollback: (await fencesOf(gate, rollbackCutoverId(ROLLOUT_ID)))?.fences ?? null,
    scopes: await readScopes(gate),
    memory: await readMemory(gate, workflows),
    commitsByOperation,
    refusedAcquires: await readAllAudit(gate, {
      kind: 'acquire',
      outcome: 'rejected',
      scope: freshAcquireScope,
    }),
    report: await gate.rollouts.report(ROLLOUT_ID),
    verified: { ok: verified.ok, checked: verified.checked, violations: verified.violationCount },
  };
}
