/**
 * What each step of a rollout left on its own scopes: the scopes an acquire pinned while it was
 * the current step, and on every scope it moved or pinned the intents whose delivery outcome is
 * unknown and the toPolicy jobs of the jobs ledger.
 *
 * Work counts for a scope's step only when it was done under the fence the rollout gave the scope
 * or a newer one, and before the rollback's fence when the rollback moved the scope back: an
 * intent or a job of fromPolicy from before the move, or from after the rollback, is not the new
 * version's. A scope a takeover took out of the rollout is not counted at all.
 */
import type { RolloutRow, RolloutScopeRow } from '../core/rollout-rows.js';
import type { Store } from '../store/store.js';
import { JOB_STATES, type JobState, type JobTally } from '../types.js';

const INTENT_PAGE = 500;

export interface StepWork {
  pinnedAtAcquire: number;
  unknownOutcomes: number;
  toPolicyJobs: JobTally;
}

/** The fences between which a scope's work is the rollout's: [from, below). */
interface FenceWindow {
  step: number;
  from: number;
  below: number;
}

export async function stepWork(
  store: Store,
  tenant: string,
  row: RolloutRow,
  marks: readonly { scope: string; row: RolloutScopeRow }[],
  /** The rollback's moves, each scope with the fence the rollback gave it (none before one). */
  movedBackFences: readonly { scope: string; fence: number }[],
): Promise<Map<number, StepWork>> {
  const work = new Map<number, StepWork>();
  const of = (step: number): StepWork => {
    let found = work.get(step);
    if (found === undefined) {
      found = emptyStepWork();
      work.set(step, found);
    }
    return found;
  };
  const movedBack = new Map(movedBackFences.map(({ scope, fence }) => [scope, fence]));
  const windows = new Map<string, FenceWindow>();
  for (const { scope, row: mark } of marks) {
    if (mark.via === 'acquire') of(mark.step).pinnedAtAcquire += 1;
    if (mark.left === true) continue;
    windows.set(scope, {
      step: mark.step,
      from: mark.fence,
      below: movedBack.get(scope) ?? Number.POSITIVE_INFINITY,
    });
  }
  const stepFor = (scope: string, fence: number): number | undefined => {
    const window = windows.get(scope);
    return window !== undefined && fence >= window.from && fence < window.below
      ? window.step
      : undefined;
  };
  let cursor: string | undefined;
  do {
    const page = await store.listIntents(tenant, {
      status: 'unknown',
      limit: INTENT_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const intent of page.items) {
      const step = stepFor(intent.scope, intent.fence);
      if (step !== undefined) of(step).unknownOutcomes += 1;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  if (windows.size > 0) {
    for (const job of await store.listJobs(tenant, [...windows.keys()])) {
      if (job.policyVersion !== row.toPolicy) continue;
      const step = stepFor(job.scope, job.fence);
      if (step === undefined) continue;
      const tally = of(step).toPolicyJobs;
      tally.byState[job.state] += 1;
      tally.total += 1;
    }
  }
  return work;
}

function emptyTally(): JobTally {
  return {
    total: 0,
    byState: Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>,
  };
}

export function emptyStepWork(): StepWork {
  return { pinnedAtAcquire: 0, unknownOutcomes: 0, toPolicyJobs: emptyTally() };
}

/** The rollout's figures: the sums over the rows of its steps. */
export function sumStepWork(rows: readonly StepWork[]): StepWork {
  const sum = emptyStepWork();
  for (const row of rows) {
    sum.pinnedAtAcquire += row.pinnedAtAcquire;
    sum.unknownOutcomes += row.unknownOutcomes;
    sum.toPolicyJobs.total += row.toPolicyJobs.total;
    for (const state of JOB_STATES)
      sum.toPolicyJobs.byState[state] += row.toPolicyJobs.byState[state];
  }
  return sum;
}
