/** Operations activate v8: one cutover of every workflow an old job touches. */
import type { Fencegate } from '../gate.js';
import { fail } from '../errors.js';
import type { CutoverReport, CutoverResult } from '../types.js';
import { CONTROLLER, POLICY_V8, type IncidentPlan } from './plan.js';

export interface CutoverOutcome {
  result: CutoverResult;
  fences: Map<string, number>;
  /** The report right after the cutover: the old jobs as it found them. */
  atCutover: CutoverReport;
}

export async function cutOverAffected(
  gate: Fencegate,
  plan: IncidentPlan,
): Promise<CutoverOutcome> {
  const result = await gate.cutover({
    cutoverId: plan.cutoverId,
    toPolicy: POLICY_V8.version,
    holder: CONTROLLER,
    scopes: plan.jobs.map((job) => job.scope),
    reason: 'v7 compaction drops required handoff facts',
  });
  const atCutover = await gate.cutoverReport(plan.cutoverId);
  if (atCutover === null) fail('internal_error', `cutover ${plan.cutoverId} has no report`);
  return {
    result,
    fences: new Map(result.fences.map(({ scope, fence }) => [scope, fence])),
    atCutover,
  };
}
