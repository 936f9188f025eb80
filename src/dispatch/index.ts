/**
 * Durable dispatch: the Dispatcher that claims committed intents and delivers them through
 * Effectors, the built-in webhook effector and its targets file, and the metrics hooks.
 */
export {
  Dispatcher,
  abortableSleep,
  DEFAULT_BATCH_SIZE,
  DEFAULT_CLAIM_TTL_MS,
  DEFAULT_MAX_UNKNOWN_REDELIVERIES,
  DEFAULT_POLL_INTERVAL_MS,
  DEFAULT_MAX_ATTEMPTS,
  TARGET_NOT_ALLOWED,
  type DispatchApi,
  type DispatcherOptions,
  type RoundSummary,
} from './dispatcher.js';
export type {
  DeliveredResult,
  DeliveryContext,
  DeliveryResult,
  Effector,
  FailedResult,
  LookupResult,
  UnknownResult,
} from './effector.js';
export {
  DEFAULT_BACKOFF,
  MAX_INITIAL_BACKOFF_MS,
  backoffDelay,
  normalizeBackoff,
  type Backoff,
  type BackoffOptions,
} from './backoff.js';
export {
  DISPATCH_OUTCOMES,
  DispatcherStats,
  fanOutMetrics,
  type DispatchOutcome,
  type DispatchStage,
  type DispatcherMetrics,
  type EffectorAnswer,
  type EffectorCall,
} from './metrics.js';
export { PromDispatcherMetrics } from './prom-metrics.js';
export { silentLogger, type DispatcherLogger } from './logger.js';
export {
  webhookEffector,
  type WebhookEffectorOptions,
  type WebhookTarget,
} from './webhook-effector.js';
export {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  effectorsFromTargets,
  loadTargets,
  parseTargets,
  targetAllows,
  targetsOpenToEveryTenant,
  type TargetConfig,
  type TargetsConfig,
} from './targets.js';
export {
  startDispatcherFromTargets,
  type RunningDispatcher,
  type StartFromTargetsOptions,
} from './start-from-targets.js';
