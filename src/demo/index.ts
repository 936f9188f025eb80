/** The policy-cutover incident demo as a library: run it, then print or assert on its result. */
export { runIncidentDemo, DEFAULT_JOBS, DEFAULT_SEED, DEFAULT_WORKFLOWS } from './incident.js';
export { formatDemoTable } from './table.js';
export type {
  DemoProgress,
  IncidentDemoOptions,
  IncidentDemoResult,
  InvariantResult,
  StoreObservations,
} from './demo-types.js';
/** The progressive-rollout demo: a ramp, a defect, the rollback and the late v8 commits. */
export { runRolloutDemo, DEFAULT_ROLLOUT_SEED, DEFAULT_ROLLOUT_WORKFLOWS } from './rollout/run.js';
export { formatRolloutTable, rolloutSummary } from './rollout/table.js';
export type { RolloutDemoOptions, RolloutDemoResult } from './rollout/types.js';
