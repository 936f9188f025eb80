/**
 * The rollout demo's cast: the two compaction versions, the ramp, the v8 worker pool and the jobs
 * it leaves in flight. Which scopes a step moves follows from the rollout's hash, in the store;
 * which of them hold in-flight jobs follows from the seed.
 */
import type { StartRolloutRequest } from '../../types.js';
import { mixSeed, sample, seededRandom } from '../seeded.js';

export const ROLLOUT_ID = 'v8-ramp';
/** The ramp as planned; the demo stops at the second step, where v8 shows its defect. */
export const STEPS = [5, 25, 50, 100] as const;

export const POLICY_V7 = {
  version: 'v7',
  digest: 'sha256:compaction-policy-v7',
  description: 'memory compaction v7 (keeps every required handoff fact)',
} as const;
export const POLICY_V8 = {
  version: 'v8',
  digest: 'sha256:compaction-policy-v8-context-budget',
  description: 'memory compaction v8 (a fact budget that shrinks as its traffic grows)',
} as const;

/** The demo's rollout: v7 to v8 over every workflow, by the planned steps. */
export function rampRequest(reason: string): StartRolloutRequest {
  return {
    rolloutId: ROLLOUT_ID,
    fromPolicy: POLICY_V7.version,
    toPolicy: POLICY_V8.version,
    prefix: 'wf-',
    steps: [...STEPS],
    reason,
  };
}

/** v8 jobs that hold a grant and have not committed yet when the operator acts. */
export const DEFAULT_IN_FLIGHT = 50;
/** The v8 worker processes the jobs are spread over. */
const V8_WORKERS = 16;
/** v8 leases outlive the demo: only the rollback takes their authority away. */
export const V8_LEASE_MS = 3_600_000;

/** What the operator does on seeing the defect: the rollback, or a pause that fences nothing. */
export type OperatorAction = 'rollback' | 'pause';

export function v8Worker(index: number): string {
  return `v8-worker-${String(index % V8_WORKERS).padStart(2, '0')}`;
}

export function workflowOf(scope: string): number {
  const match = /^wf-(\d+)\/memory$/.exec(scope);
  if (match === null) throw new RangeError(`${scope} is not a workflow's memory scope`);
  return Number(match[1]);
}

/** The fewest workflows per in-flight job: the 25 % step must move more scopes than it leaves in flight. */
export const WORKFLOWS_PER_IN_FLIGHT = 10;

/**
 * Which of the scopes a step moved hold an in-flight job: a seeded sample of `count` of them,
 * taken from the scopes in name order, so a run replays.
 */
export function pickInFlight(seed: number, moved: readonly string[], count: number): Set<string> {
  if (count > moved.length) {
    throw new RangeError(`${count} in-flight jobs need more than the ${moved.length} scopes moved`);
  }
  const sorted = [...moved].sort();
  const picked = sample(sorted.length, count, seededRandom(mixSeed(seed, 0x25)));
  return new Set(picked.map((i) => sorted[i]!));
}
