/** fencegate/client: the FencegateApi and FencegateOpsApi over HTTP, with the library's errors. */
export { FencegateClient, type FencegateClientOptions } from './client.js';
export {
  FencegateAdminClient,
  type CreateTokenRequest,
  type CreatedToken,
  type FencegateAdminClientOptions,
  type TokenSummary,
} from './admin-client.js';
export type { FencegateApi, FencegateOpsApi, VerifyReport } from '../api.js';
export type { Violation, ViolationKind } from '../audit/violations.js';
export {
  FencegateError,
  ERROR_CATALOG,
  RENEWAL_LEASE_LOST_CODES,
  COMMIT_AUTHORITY_LOST_CODES,
  isLeaseLostOnRenewal,
  isAuthorityLostOnCommit,
  isFencegateError,
  isErrorCode,
  type ErrorCode,
  type CommitRejectionCode,
} from '../errors.js';
export type { RecordReads, RecordReadsResult } from '../core/record-reads.js';
export {
  ROUTE_TABLE,
  ROUTE_NAMES,
  RETRY_CLASSES,
  routePath,
  routeTableJson,
  type HttpMethod,
  type RetryClass,
  type RouteAuth,
  type RouteEntry,
  type RouteName,
  type RouteParams,
} from '../route-table.js';
export type * from '../types.js';
export type * from './wire.js';
