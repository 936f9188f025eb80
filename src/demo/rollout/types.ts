/** The rollout demo's options and structured result. */
import type { Fencegate } from '../../gate.js';
import type { RolloutReport } from '../../types.js';
import type { AttemptCounts, DemoProgress, InvariantResult, PhaseTiming } from '../demo-types.js';
import type { OperatorAction } from './plan.js';

export interface RolloutDemoOptions {
  /** An open gate on a tenant that holds no workflow scopes yet. */
  gate: Fencegate;
  /** Workflows, each with a `wf-<n>/memory` scope pinned to v7. Default 10,000. */
  workflows?: number;
  /** v8 jobs holding a grant on a moved scope when the operator acts. Default 50. */
  inFlight?: number;
  seed?: number;
  /** What the operator does on seeing the defect. Default 'rollback'. */
  action?: OperatorAction;
  /** Operations sent together (batches.ts). */
  batchSize?: number;
  onProgress?: (progress: DemoProgress) => void;
}

/** One step of the ramp as the operator saw it (inspect-step.ts). */
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
  /** The in-flight v8 jobs' commits after the operator acted, from their audit entries. */
  inFlightCommits: AttemptCounts;
  rejectedByReason: Record<string, number>;
  /** Moved scopes back on v7, unheld, with a fence above the step's. */
  movedBack: { back: number; total: number };
  /** Scopes the ramp never moved, as they were before it started. */
  untouched: { untouched: number; total: number };
  /** The audited answer to a v8-only worker's fresh acquire after the operator acted. */
  freshV8Acquire: string | null;
  /** Workflows v8 left missing a handoff fact: a rollback does not revert records. */
  damagedWorkflows: number;
  auditVerified: { ok: boolean; checked: number; violations: number };
}

export interface RolloutDemoResult {
  ok: boolean;
  seed: number;
  workflows: number;
  tenant: string;
  rolloutId: string;
  action: OperatorAction;
  steps: StepSummary[];
  /** Scopes the ramp moved to v8. */
  moved: number;
  inFlight: number;
  /** From the rollback call until it returned with every moved scope fenced; null without one. */
  decisionToFencedMs: number | null;
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
