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
