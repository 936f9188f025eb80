export { Fencegate, DEFAULT_TENANT, type FencegateOptions } from './gate.js';
export type { FencegateApi, FencegateOpsApi, VerifyReport } from './api.js';
export {
  verifyHistory,
  verifyStore,
  type VerifyResult,
  type Violation,
  type ViolationKind,
} from './audit/index.js';
export {
  FencegateError,
  ERROR_CATALOG,
  COMMIT_REJECTION_CODES,
  isFencegateError,
  isErrorCode,
  type ErrorCode,
  type CommitRejectionCode,
} from './errors.js';
export { systemClock, type Clock } from './core/clock.js';
export { canonicalJson, fingerprint } from './core/canonical.js';
export { DEFAULT_LIMITS, type Limits } from './core/limits.js';
export { openStore, DEFAULT_STORE_URL } from './store/open.js';
export type { Store, StoreCapabilities } from './store/store.js';
export type * from './types.js';
export * from './dispatch/index.js';
export * from './store/postgres/index.js';
