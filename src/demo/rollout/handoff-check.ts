/**
 * The handoff check after a step: the next agent of each workflow v8 compacted reads the memory
 * v8 left and checks that it still carries every required handoff fact (regenerated from the
 * seed, not taken from the demo's bookkeeping). A v8 job whose record misses one is reported
 * `failed` to the jobs ledger, where the rollout's gate reads it: the check is how the defect
 * reaches the gate. Everything is read from the store: the step's moved scopes (its cutover) and
 * v8's accepted commits on them (the audit log).
 */
import type { Fencegate } from '../../gate.js';
import { fail } from '../../errors.js';
import type { JobEvent } from '../../types.js';
import { canonicalFacts, missingFacts } from '../handoff-facts.js';
import { recordEvents } from '../job-events.js';
import { MEMORY, v8JobId } from '../plan.js';
import { readAllAudit } from '../store-view.js';
import { POLICY_V8, workflowOf } from './plan.js';

export interface StepHealth {
  cutoverId: string;
  percent: number;
  /** Scopes the step moved to v8. */
  moved: string[];
  /** v8's accepted commits on them since the step began. */
  v8Writes: number;
  /** Workflows whose memory, as v8 left it, misses a required handoff fact. */
  damaged: number;
  factsLost: number;
}

export async function checkHandoffs(
  gate: Fencegate,
  seed: number,
  cutoverId: string,
  percent: number,
): Promise<StepHealth> {
  const cutover = await gate.store.getCutover(gate.tenant, cutoverId);
  if (cutover === null) fail('internal_error', `the rollout's cutover ${cutoverId} is missing`);
  const moved = cutover.fences.map(({ scope }) => scope);
  const movedSet = new Set(moved);
  /** The fence of v8's write on each scope. */
  const written = new Map<string, number>();
  for (const entry of await readAllAudit(gate, {
    kind: 'commit',
    outcome: 'committed',
    afterSeq: cutover.startSeq,
  })) {
    if (entry.scope !== null && movedSet.has(entry.scope)) {
      if (entry.policyVersion === POLICY_V8.version) written.set(entry.scope, entry.fence ?? 0);
    }
  }
  let damaged = 0;
  let factsLost = 0;
  const failed: JobEvent[] = [];
  for (const [scope, fence] of written) {
    const workflow = workflowOf(scope);
    const record = await gate.getRecord(scope, MEMORY);
    const lost = missingFacts(canonicalFacts(seed, workflow), record.value).length;
    factsLost += lost;
    if (lost === 0) continue;
    damaged += 1;
    failed.push({
      jobId: v8JobId(workflow),
      scope,
      policyVersion: POLICY_V8.version,
      fence,
      state: 'failed',
      attempt: 1,
    });
  }
  await recordEvents(gate, failed);
  return { cutoverId, percent, moved, v8Writes: written.size, damaged, factsLost };
}
