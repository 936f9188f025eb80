/**
 * `fencegate`: the facade, its types, the errors and openStore. Everything else is a subpath of
 * the package: fencegate/store, fencegate/postgres, fencegate/audit, fencegate/dispatch,
 * fencegate/client, fencegate/server, fencegate/testing and the integrations.
 */
export { Fencegate, DEFAULT_TENANT, type FencegateOptions } from './gate.js';
export type { FencegateApi, FencegateOpsApi, VerifyReport } from './api.js';
export {
  FencegateError,
  ERROR_CATALOG,
  COMMIT_REJECTION_CODES,
  RENEWAL_LEASE_LOST_CODES,
  COMMIT_AUTHORITY_LOST_CODES,
  isLeaseLostOnRenewal,
  isAuthorityLostOnCommit,
  isFencegateError,
  isErrorCode,
  type ErrorCode,
  type CommitRejectionCode,
  type ErrorDetails,
} from './errors.js';
export { openStore, DEFAULT_STORE_URL, type OpenStoreOptions } from './store/open.js';
export type { Store } from './store/store.js';
export type { Clock } from './core/clock.js';
export type { Limits } from './core/limits.js';
export type * from './types.js';
