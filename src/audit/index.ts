/** The history checker: verify an audit log, keep its checkpoint, count violations for metrics. */
export {
  verifyHistory,
  verifyStore,
  DEFAULT_PAGE_SIZE,
  type VerifyResult,
  type VerifyHistoryOptions,
  type VerifyStoreOptions,
} from './verify.js';
export {
  saveCheckpoint,
  loadCheckpoint,
  parseCheckpoint,
  emptyCheckpoint,
  type VerifyCheckpoint,
} from './checkpoint.js';
export { createViolationCounter, type ViolationCounterOptions } from './violation-gauge.js';
export { VIOLATION_KINDS, type Violation, type ViolationKind } from './violations.js';
export { HistoryVerifier, DEFAULT_MAX_VIOLATIONS } from './history-verifier.js';
