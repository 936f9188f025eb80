/**
 * fencegate/testing: the public test kit. A manual store clock, pause points and scheduler-driven
 * interleavings to control the order of competing workers without sleeps, a fault-injecting Store
 * wrapper, the store conformance suite (vitest) and the model-based check every adapter runs.
 */
export { ManualClock } from './manual-clock.js';
export { PausePoints, PausePointError, NO_PAUSE } from './pause-points.js';
export {
  exploreInterleavings,
  runInterleaved,
  InterleavedStepError,
  type ExploreOptions,
  type InterleavingScenario,
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
  defineStoreConformanceSuite,
  type ConformanceCapabilities,
  type ConformanceSubject,
  type StoreConformanceOptions,
} from './conformance/index.js';
export { auditAfter, tenantState, type TenantState } from './conformance/helpers.js';
export {
  checkStoreAgainstModel,
  type ModelCheckOptions,
  type ModelSubject,
} from './model/index.js';
