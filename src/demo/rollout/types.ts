/** The rollout demo's options and structured result. */
import type { Fencegate } from '../../gate.js';
import type { RolloutReport } from '../../types.js';
import type { AttemptCounts, DemoProgress, InvariantResult, PhaseTiming } from '../demo-types.js';
import type { GateAction } from './plan.js';

export interface RolloutDemoOptions {
  /** An open gate on a tenant that holds no workflow scopes yet. */
  gate: Fencegate;
  /** Workflows, each with a `wf-<n>/memory` scope pinned to v7. Default 10,000. */
  workflows?: number;
  /** v8 jobs holding a grant on a moved scope when the gate fails. Default 50. */
  inFlight?: number;
  seed?: number;
  /** What the gate's failure does (the rollout's onFailure). Default 'rollback'. */
  action?: GateAction;
  /** How often the demo's rollout driver looks. Default 50 ms. */
  driverIntervalMs?: number;
  /** Operations sent together (batches.ts). */
  batchSize?: number;
  onProgress?: (progress: DemoProgress) => void;
}

/** One step of the ramp as the handoff check saw it (handoff-check.ts). */
export interface StepSummary {
  cutoverId: string;
  percent: number;
  moved: number;
  v8Writes: number;
  damaged: number;
  factsLost: number;
}

/** Everything below is read back from the store. */
export interface RolloutObservations {
  /** The in-flight v8 jobs' commits after the driver acted, from their audit entries. */
  inFlightCommits: AttemptCounts;
  rejectedByReason: Record<string, number>;
  /** Moved scopes back on v7, unheld, with a fence above the step's. */
  movedBack: { back: number; total: number };
  /** Scopes the ramp never moved, as they were before it started. */
  untouched: { untouched: number; total: number };
  /** The audited answer to a v8-only worker's fresh acquire after the driver acted. */
  freshV8Acquire: string | null;
  /** Workflows v8 left missing a handoff fact: a rollback does not revert records. */
  damagedWorkflows: number;
  auditVerified: { ok: boolean; checked: number; violations: number };
}

/** The reading of the gate that failed, as the driver recorded it in the store. */
export interface GateReading {
  name: string;
  /** The percent the rollout had reached. */
  percent: number;
  /** The share of v8's jobs that failed, over the step's hold. */
  value: number | null;
  samples: number;
  limit: number | null;
  /** The look that decided, in store time. */
  at: number;
  /** The reason the driver gave the rollout. */
  reason: string | null;
}

export interface RolloutDemoResult {
  ok: boolean;
  seed: number;
  workflows: number;
  tenant: string;
  rolloutId: string;
  action: GateAction;
  steps: StepSummary[];
  /** Scopes the ramp moved to v8. */
  moved: number;
  inFlight: number;
  /**
   * From the gate's decision (the driver's look that read it failed) until the rollback's
   * cutover completed, every moved scope fenced, in store time; null without a rollback.
   */
  decisionToFencedMs: number | null;
  /** What stopped the ramp: 'gate' when the driver acted on a failed gate; null when nothing did. */
  trigger: 'gate' | null;
  /** The failed gate's reading; null when no gate failed. */
  gate: GateReading | null;
  /** The rollout report's rollback figures; null when there was no rollback. */
  staleAttempts: number | null;
  staleAccepted: number | null;
  report: RolloutReport | null;
  store: RolloutObservations;
  /** What the resumed in-flight jobs were answered (for display; the invariants use `store`). */
  answers: { inFlightRejected: number; freshV8Acquire: string };
  invariants: InvariantResult[];
  phases: PhaseTiming[];
  totalMs: number;
}
