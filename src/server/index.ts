/** The HTTP server: build it around a store, or start it from a store URL. */
export {
  buildServer,
  DEFAULT_SERVER_LIMITS,
  type ServerLimits,
  type ServerOptions,
} from './build-server.js';
export {
  startServer,
  FIRST_RUN_TENANT,
  type FirstRunTokens,
  type RunningServer,
  type ServeDispatchOptions,
  type StartServerOptions,
} from './start-server.js';
export { issueToken, hashToken, type IssuedToken, type IssueTokenRequest } from './tokens.js';
export { createLogger } from './logger.js';
