/**
 * The rollout demo's cast: the two compaction versions, the ramp, the v8 worker pool and the jobs
 * it leaves in flight. Which scopes a step moves follows from the rollout's hash, in the store;
 * which of them hold in-flight jobs follows from the seed.
 */
import type { RolloutGate, StartRolloutRequest } from '../../types.js';
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

/** The gate the ramp is held to: the share of v8's jobs that ended failed. */
export const HANDOFF_GATE = 'handoff-facts';
/** At most 5 % of v8's jobs may fail; v7's compaction fails none. */
const GATE_MAX_FAILURES = 0.05;

/**
 * Holds in store time, one per step. The demo holds 5 % for 0 s: its gate passes at the first
 * look that has its samples, so the run does not wait (a real ramp holds for minutes). 25 % and
 * later are held 10 minutes, which the demo never waits out: the gate fails during the hold.
 */
const HOLD_SECONDS = [0, 600, 600, 600];
/** How long a hold waits past its end for the gate's samples before the rollout pauses. */
const HOLD_EXTENSION_SECONDS = 60;

/** The samples the gate needs before it decides: a hundredth of the workflows, at least 2. */
export function gateMinSamples(workflows: number): number {
  return Math.max(2, Math.floor(workflows / 100));
}

export function handoffGate(workflows: number): RolloutGate {
  return {
    name: HANDOFF_GATE,
    metric: 'job_failure_ratio',
    minSamples: gateMinSamples(workflows),
    max: GATE_MAX_FAILURES,
  };
}

/**
 * The demo's rollout: v7 to v8 over every workflow, by the planned steps, driven by the rollout
 * driver: held at each step, its gate checked, rolled back (or paused) when the gate fails.
 */
export function rampRequest(
  reason: string,
  workflows: number,
  onFailure: GateAction = 'rollback',
): StartRolloutRequest {
  return {
    rolloutId: ROLLOUT_ID,
    fromPolicy: POLICY_V7.version,
    toPolicy: POLICY_V8.version,
    prefix: 'wf-',
    steps: [...STEPS],
    holdSeconds: [...HOLD_SECONDS],
    holdExtensionSeconds: HOLD_EXTENSION_SECONDS,
    gates: [handoffGate(workflows)],
    onFailure,
    reason,
  };
}

/** How often the demo's rollout driver looks (`fencegate serve` looks every second). */
export const DEMO_DRIVER_INTERVAL_MS = 50;

/** v8 jobs that hold a grant and have not committed yet when the gate fails. */
export const DEFAULT_IN_FLIGHT = 50;
/** The v8 worker processes the jobs are spread over. */
const V8_WORKERS = 16;
/** v8 leases outlive the demo: only the rollback takes their authority away. */
export const V8_LEASE_MS = 3_600_000;

/** What the gate's failure does (the rollout's onFailure): the rollback, or a pause that fences nothing. */
export type GateAction = 'rollback' | 'pause';

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
