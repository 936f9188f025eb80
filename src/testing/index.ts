/**
 * fencegate/testing: the public test kit. A manual store clock, pause points and scheduler-driven
 * interleavings to control the order of competing workers without sleeps, a fault-injecting Store
 * wrapper and the model-based check every adapter runs. It needs no test framework: the helpers
 * built on fast-check (exploreInterleavings, checkStoreAgainstModel) load it when they run, and
 * the vitest conformance suite is fencegate/testing/vitest.
 */
export { ManualClock } from './manual-clock.js';
export { PausePoints, PausePointError, NO_PAUSE } from './pause-points.js';
export {
  exploreInterleavings,
  runInterleaved,
  InterleavedStepError,
  type ExploreOptions,
  type InterleavingScenario,
  type InterleavingScheduler,
  type InterleavingTrace,
  type WorkerStep,
  type Workers,
} from './interleavings.js';
export {
  faultyStore,
  type Fault,
  type FaultCall,
  type FaultControls,
  type FaultPlan,
  type FaultRule,
  type FaultyStore,
  type StoreMethod,
} from './faulty-store.js';
export {
  checkStoreAgainstModel,
  type ModelCheckOptions,
  type ModelSubject,
} from './model/index.js';
