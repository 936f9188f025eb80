/** The incident demo's options, progress events and structured result. */
import type { Fencegate } from '../gate.js';
import type { CutoverReport, JobState } from '../types.js';

export interface DemoProgress {
  phase: string;
  done: number;
  total: number;
}

export interface IncidentDemoOptions {
  /** An open gate on an empty tenant of a store with policies and cutovers (SQLite). */
  gate: Fencegate;
  /** Agent workflows, each with a `wf-<n>/memory` scope. Default 10,000. */
  workflows?: number;
  /** Compaction jobs issued under v7. Default 600 (80 running, 120 reserved, 400 queued). */
  jobs?: number;
  seed?: number;
  /**
   * Operations sent together: by default 500 on SQLite (one group-commit batch), 64 on a store
   * over the network, where each call waits within its deadline behind the others (batches.ts).
   */
  batchSize?: number;
  onProgress?: (progress: DemoProgress) => void;
}

export interface InvariantResult {
  name: string;
  ok: boolean;
  /** What was found: counts on success, the first offending scopes or entries on failure. */
  detail: string;
}

export interface AttemptCounts {
  attempted: number;
  accepted: number;
  rejected: number;
}

/** Everything below is read back from the store (records, scopes, audit log, jobs ledger). */
export interface StoreObservations {
  /** The 30 running v7 jobs that resumed after the cutover. */
  resumed: AttemptCounts;
  /** The 100 delayed old-generation commits. */
  delayed: AttemptCounts;
  /** Rejection codes of the stale attempts, from their audit entries. */
  staleRejectedByReason: Record<string, number>;
  /** The audited answer to the v7 worker's fresh acquire (a rejection code), or null if absent. */
  freshAcquireRefusal: string | null;
  /** Accepted v8 controller commits, and on how many distinct scopes. */
  v8Commits: number;
  v8Scopes: number;
  /** Retried v8 commits: audit entries `committed` for their operationIds (one each). */
  retried: { operations: number; committedEntries: number; storedCommitted: number };
  handoffFacts: { preserved: number; required: number; workflowsComplete: number };
  /** Workflows outside the cutover still on v7 with their memory unchanged. */
  unaffected: { untouched: number; total: number };
  /** Old jobs by their last state in the jobs ledger after the drain. */
  oldJobsByState: Record<JobState, number>;
  /** v8 controller jobs by their last state in the jobs ledger. */
  controllerJobsByState: Record<JobState, number>;
  auditVerified: { ok: boolean; checked: number; violations: number };
}

export interface PhaseTiming {
  phase: string;
  ms: number;
}

export interface IncidentDemoResult {
  ok: boolean;
  seed: number;
  workflows: number;
  jobs: number;
  tenant: string;
  cutoverId: string;
  plan: {
    running: number;
    reserved: number;
    queued: number;
    resumed: number;
    delayed: number;
    retried: number;
  };
  /** The cutover report just after the cutover: the old jobs as the cutover found them. */
  jobsAtCutover: Record<JobState, number>;
  /** The final drain-and-reconcile report (gate.cutoverReport). */
  report: CutoverReport;
  store: StoreObservations;
  /** What the workers were answered (for display; the invariants use `store`). */
  answers: {
    resumedRejected: number;
    delayedRejected: number;
    replayed: number;
    freshAcquire: string;
    /** v7 candidates that had dropped a required handoff fact (all of them rejected). */
    v7CandidatesDroppingFacts: number;
    v7Candidates: number;
  };
  invariants: InvariantResult[];
  phases: PhaseTiming[];
  totalMs: number;
}
