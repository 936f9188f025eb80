/**
 * What the operator looks at after a step, from the store: the step's moved scopes (its cutover),
 * v8's accepted commits on them (the audit log) and, for each one, whether the memory record it
 * left still carries every required handoff fact (regenerated from the seed, not taken from the
 * demo's bookkeeping). One damaged workflow is enough to stop the ramp.
 */
import type { Fencegate } from '../../gate.js';
import { fail } from '../../errors.js';
import { canonicalFacts, missingFacts } from '../handoff-facts.js';
import { MEMORY } from '../plan.js';
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

export async function inspectStep(
  gate: Fencegate,
  seed: number,
  cutoverId: string,
  percent: number,
): Promise<StepHealth> {
  const cutover = await gate.store.getCutover(gate.tenant, cutoverId);
  if (cutover === null) fail('internal_error', `the rollout's cutover ${cutoverId} is missing`);
  const moved = cutover.fences.map(({ scope }) => scope);
  const movedSet = new Set(moved);
  const written = new Set<string>();
  for (const entry of await readAllAudit(gate, {
    kind: 'commit',
    outcome: 'committed',
    afterSeq: cutover.startSeq,
  })) {
    if (entry.scope !== null && movedSet.has(entry.scope)) {
      if (entry.policyVersion === POLICY_V8.version) written.add(entry.scope);
    }
  }
  let damaged = 0;
  let factsLost = 0;
  for (const scope of written) {
    const record = await gate.getRecord(scope, MEMORY);
    const lost = missingFacts(canonicalFacts(seed, workflowOf(scope)), record.value).length;
    factsLost += lost;
    if (lost > 0) damaged += 1;
  }
  return { cutoverId, percent, moved, v8Writes: written.size, damaged, factsLost };
}
