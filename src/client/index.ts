/** fencegate/client: the FencegateApi over HTTP, with the library's error catalog. */
export { FencegateClient, type FencegateClientOptions } from './client.js';
export type { FencegateApi } from '../api.js';
export {
  FencegateError,
  ERROR_CATALOG,
  isFencegateError,
  isErrorCode,
  type ErrorCode,
  type CommitRejectionCode,
} from '../errors.js';
export type * from '../types.js';
export type * from './wire.js';
