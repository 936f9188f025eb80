/**
 * `fencegate serve --dispatch --targets FILE`: loads the operator's targets, builds one webhook
 * effector per target and runs a Dispatcher until stop().
 */
import { fail } from '../errors.js';
import {
  DEFAULT_CLAIM_TTL_MS,
  Dispatcher,
  type DispatchApi,
  type DispatcherOptions,
} from './dispatcher.js';
import type { DispatcherLogger } from './logger.js';
import type { DispatcherMetrics } from './metrics.js';
import {
  effectorsFromTargets,
  loadTargets,
  targetAllows,
  targetsOpenToEveryTenant,
} from './targets.js';

export interface StartFromTargetsOptions {
  /** A tenant-bound Fencegate (or the HTTP client); one dispatcher serves one tenant. */
  api: DispatchApi;
  /**
   * The tenant `api` acts for, checked against the targets' `tenants` lists. Taken from a
   * Fencegate handle when absent; needed with the HTTP client when a target has a tenants list.
   */
  tenant?: string;
  targetsFile: string;
  dispatcherId?: string;
  logger?: DispatcherLogger;
  metrics?: DispatcherMetrics;
  /** Tuning (claimTtlMs, batchSize, pollIntervalMs, backoff, …) over the defaults. */
  tuning?: Omit<DispatcherOptions, 'api' | 'dispatcherId' | 'effectors' | 'logger' | 'metrics'>;
}

export interface RunningDispatcher {
  dispatcher: Dispatcher;
  /** The target names it delivers to. */
  targets: readonly string[];
  /** Stops claiming and resolves once in-flight deliveries are recorded. Idempotent. */
  stop(): Promise<void>;
}

/** Room between the slowest webhook timeout and the claim's end to record the outcome. */
const CLAIM_MARGIN_MS = 5000;

export async function startDispatcherFromTargets(
  options: StartFromTargetsOptions,
): Promise<RunningDispatcher> {
  const config = await loadTargets(options.targetsFile);
  const slowest = Math.max(...Object.values(config.targets).map((target) => target.timeoutMs));
  const claimTtlMs =
    options.tuning?.claimTtlMs ?? Math.max(DEFAULT_CLAIM_TTL_MS, 2 * slowest + CLAIM_MARGIN_MS);
  if (claimTtlMs <= slowest) {
    // A claim that lapses mid-request lets a second dispatcher deliver concurrently.
    fail(
      'invalid_request',
      `claimTtlMs (${claimTtlMs}) must exceed the slowest target timeoutMs (${slowest})`,
      { field: 'claimTtlMs' },
    );
  }
  const tenant = options.tenant ?? tenantOf(options.api);
  const restricted = Object.keys(config.targets).length > targetsOpenToEveryTenant(config).length;
  if (tenant === undefined && restricted) {
    // Without the tenant, a target reserved for one tenant could carry another's intents.
    fail(
      'invalid_request',
      `${options.targetsFile}: a target has a tenants list; the dispatcher needs the tenant it serves`,
      { field: 'tenant' },
    );
  }
  const dispatcher = new Dispatcher({
    ...options.tuning,
    claimTtlMs,
    api: options.api,
    effectors: effectorsFromTargets(config),
    ...(tenant === undefined
      ? {}
      : { targetAllowed: (target: string) => targetAllows(config, target, tenant) }),
    ...(options.dispatcherId === undefined ? {} : { dispatcherId: options.dispatcherId }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  dispatcher.start();
  options.logger?.info(
    { dispatcher: dispatcher.dispatcherId, targets: dispatcher.targets, claimTtlMs },
    'dispatcher started',
  );
  let stopped: Promise<void> | undefined;
  return {
    dispatcher,
    targets: dispatcher.targets,
    stop: () => (stopped ??= dispatcher.stop()),
  };
}

/** The tenant of a Fencegate handle; undefined for an API that does not say (the HTTP client). */
function tenantOf(api: DispatchApi): string | undefined {
  const tenant = (api as { tenant?: unknown }).tenant;
  return typeof tenant === 'string' ? tenant : undefined;
}
