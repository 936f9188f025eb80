/**
 * Opens the store, builds the server, starts listening and, with `dispatch`, runs one dispatcher
 * per tenant in the same process (every tenant by default); then, last, makes the first-run tokens.
 * They are shown only once, so nothing that can fail comes after them: a start that cannot listen
 * (its port taken) leaves the store without them, and the next start makes them. Closing the
 * running server stops the dispatchers first (they finish recording in-flight deliveries), then
 * lets in-flight requests finish, then closes the store.
 */
import type { TenantRateLimit } from './tenant-rate-limit.js';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { DEFAULT_LIMITS } from '../core/limits.js';
import { requireTenant } from '../core/validate.js';
import { silentLogger, type DispatcherLogger } from '../dispatch/logger.js';
import { PromDispatcherMetrics } from '../dispatch/prom-metrics.js';
import {
  startDispatcherFromTargets,
  type RunningDispatcher,
  type StartFromTargetsOptions,
} from '../dispatch/start-from-targets.js';
import { loadTargets, targetsOpenToEveryTenant, type TargetsConfig } from '../dispatch/targets.js';
import { TenantDispatch } from '../dispatch/tenant-dispatch.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { fail, isFencegateError } from '../errors.js';
import { RolloutDriver } from '../rollout/driver.js';
import { DEFAULT_ROLLOUT_CONFIG, type RolloutConfig } from '../rollout/driver-config.js';
import { sourceReader } from '../rollout/metric-sources.js';
import { Fencegate } from '../gate.js';
import { startOutcomePruner } from '../retention/outcome-pruner.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { ManualClock } from '../testing/manual-clock.js';
import { buildServer, type ServerLimits } from './build-server.js';
import { createLogger } from './logger.js';
import { newAdminToken, newToken } from './tokens.js';

/** `fencegate serve --dispatch`: dispatchers in the server process, on the server's store. */
export interface ServeDispatchOptions {
  /** The operator's targets file: the only URLs the dispatchers call (docs/dispatch.md). */
  targetsFile: string;
  /**
   * Only these tenants (one dispatcher each). Absent: every tenant, including tenants that appear
   * after start (see TenantDispatch).
   */
  tenants?: readonly string[];
  /** How often tenants with intents are looked for when every tenant is served. Default 1000. */
  discoverIntervalMs?: number;
  /** Recorded on claims; default dispatcher-HOST-PID. */
  dispatcherId?: string;
  /** Claim lease, batch size, poll interval, backoff… over the defaults. */
  tuning?: StartFromTargetsOptions['tuning'];
}

export interface StartServerOptions {
  /** A store URL (`sqlite:PATH`, …). */
  store: string;
  host: string;
  port: number;
  adminToken?: string;
  logger?: boolean | FastifyBaseLogger;
  limits?: Partial<ServerLimits>;
  /** Test servers only: the store runs on this clock and POST /v1/test/clock moves it. */
  testClock?: ManualClock;
  /** Run dispatchers in this process once the server listens. */
  dispatch?: ServeDispatchOptions;
  /** Delete stored outcomes older than this, at start and hourly (docs/semantics.md, Retention). */
  keepOutcomesMs?: number;
  /** Behind a TLS-terminating proxy: honour its X-Forwarded-Proto (docs/dashboard.md). */
  trustProxy?: boolean;
  /** Label the rollout gauges of /metrics with tenant and rollout id (ServerOptions). */
  metricsRolloutNames?: boolean;
  /** The rollout driver and metric sources (rollout/driver-config.ts); the defaults when absent. */
  rollouts?: RolloutConfig;
  /** This server's name in rollout driver leases; host-pid-random when absent. */
  driverId?: string;
  /** Each tenant's rate (`--tenant-rate`, `--tenant-burst`); unlimited when absent. */
  tenantRateLimit?: TenantRateLimit;
}

/** Tokens created because the store had none and no admin token was configured. */
export interface FirstRunTokens {
  adminToken: string;
  /** The ids, for `fencegate token revoke ID`. */
  adminTokenId: string;
  operatorToken: string;
  operatorTokenId: string;
  operatorTenant: string;
}

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  /** http://HOST:PORT, with the port actually bound. */
  url: string;
  firstRun: FirstRunTokens | null;
  /** What `dispatch` runs; null without it. */
  dispatch: RunningDispatch | null;
  /**
   * Stops the dispatchers (in-flight deliveries are recorded), stops accepting requests, lets
   * in-flight ones finish, closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The dispatch of `fencegate serve --dispatch`, as the startup lines describe it. */
export interface RunningDispatch {
  /** The tenants served, or 'every' (discovered while running). */
  tenants: readonly string[] | 'every';
  /** The targets of the file. */
  targets: readonly string[];
  /** The targets without a tenants list: every tenant's intents may use them. */
  openToEveryTenant: readonly string[];
  /** The dispatchers running now, by tenant. */
  dispatchers: ReadonlyMap<string, RunningDispatcher>;
}

export const FIRST_RUN_TENANT = 'dev';

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { dispatch } = options;
  let targets: TargetsConfig | undefined;
  if (dispatch !== undefined) {
    // A bad targets file or tenant is refused before anything is opened or bound.
    targets = await loadTargets(dispatch.targetsFile);
    if (dispatch.tenants?.length === 0) {
      fail('invalid_request', 'dispatch needs at least one tenant, or none for every tenant', {
        field: 'tenants',
      });
    }
    for (const tenant of dispatch.tenants ?? []) requireTenant(tenant);
  }
  // Concurrent requests share one durable transaction through the store's group commit.
  const store = await openStore(options.store, {
    groupCommit: true,
    ...(options.testClock === undefined ? {} : { clock: options.testClock }),
  });
  let app: FastifyInstance | undefined;
  let tenantDispatch: TenantDispatch | undefined;
  let stopPruner: (() => Promise<void>) | undefined;
  let driver: RolloutDriver | undefined;
  const rollouts = options.rollouts ?? DEFAULT_ROLLOUT_CONFIG;
  try {
    // One registry for the server's and the dispatchers' metrics: one scrape shows both.
    const registry = new Registry();
    app = await buildServer({
      store,
      ...(options.adminToken === undefined ? {} : { adminToken: options.adminToken }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.testClock === undefined ? {} : { testClock: options.testClock }),
      processMetrics: true,
      registry,
      trustProxy: options.trustProxy === true,
      metricsRolloutNames: options.metricsRolloutNames === true,
      metricSources: rollouts.metricSources,
      ...(options.tenantRateLimit === undefined
        ? {}
        : { tenantRateLimit: options.tenantRateLimit }),
    });
    await app.listen({ host: options.host, port: options.port });
    const url = `http://${urlHost(options.host)}:${boundPort(app, options.port)}`;
    if (dispatch !== undefined && targets !== undefined) {
      tenantDispatch = await startDispatch(store, dispatch, registry, options);
    }
    const running = app;
    const dispatching = tenantDispatch;
    stopPruner =
      options.keepOutcomesMs === undefined
        ? () => Promise.resolve()
        : startOutcomePruner(store, {
            keepOutcomesMs: options.keepOutcomesMs,
            onPass: (result) => {
              if ('error' in result)
                running.log.warn('deleting old stored outcomes failed; retrying in an hour');
              else running.log.info({ deleted: result.deleted }, 'old stored outcomes deleted');
            },
          });
    const pruning = stopPruner;
    if (rollouts.driver) driver = startDriver(store, rollouts, running, options.driverId);
    const driving = driver;
    const firstRun = options.adminToken === undefined ? await createFirstRunTokens(store) : null;
    let closed: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      firstRun,
      dispatch:
        dispatch === undefined || targets === undefined || dispatching === undefined
          ? null
          : {
              tenants: dispatch.tenants ?? 'every',
              targets: Object.keys(targets.targets),
              openToEveryTenant: targetsOpenToEveryTenant(targets),
              dispatchers: dispatching.dispatchers,
            },
      close: () =>
        (closed ??= (async () => {
          try {
            // Before the store closes: a dispatcher records its in-flight outcomes through it.
            await dispatching?.stop();
            await driving?.stop();
            await pruning();
          } finally {
            try {
              await running.close();
            } finally {
              await store.close();
            }
          }
        })()),
    };
  } catch (error) {
    await driver?.stop();
    await tenantDispatch?.stop();
    await stopPruner?.();
    await app?.close();
    await store.close();
    throw error;
  }
}

function startDriver(
  store: Store,
  config: RolloutConfig,
  app: FastifyInstance,
  driverId: string | undefined,
): RolloutDriver {
  const log = app.log.child({ component: 'rollout-driver' });
  return new RolloutDriver({
    store,
    holder: driverId ?? `driver-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    leaseMs: config.leaseMs,
    intervalMs: config.intervalMs,
    readSource: sourceReader(config.metricSources),
    onAction: (action) => log.info(action, 'rollout driver acted'),
    onError: (error) =>
      log.warn(
        { code: isFencegateError(error) ? error.code : 'internal_error' },
        'rollout driver look failed; trying again at the next',
      ),
  }).start();
}

async function startDispatch(
  store: Store,
  dispatch: ServeDispatchOptions,
  registry: Registry,
  options: StartServerOptions,
): Promise<TenantDispatch> {
  // A handle on the server's store; never closed here, since the server owns the store.
  const base = await Fencegate.open({ store, limits: { ...DEFAULT_LIMITS, ...options.limits } });
  const metrics = new PromDispatcherMetrics(registry);
  return TenantDispatch.start({
    startTenant: (tenant) =>
      startDispatcherFromTargets({
        api: base.forTenant(tenant),
        tenant,
        targetsFile: dispatch.targetsFile,
        ...(dispatch.dispatcherId === undefined ? {} : { dispatcherId: dispatch.dispatcherId }),
        logger: dispatcherLogger(options.logger, tenant),
        metrics,
        ...(dispatch.tuning === undefined ? {} : { tuning: dispatch.tuning }),
      }),
    openTenants: () => store.listTenantsWithOpenIntents(),
    ...(dispatch.tenants === undefined ? {} : { tenants: dispatch.tenants }),
    ...(dispatch.discoverIntervalMs === undefined
      ? {}
      : { discoverIntervalMs: dispatch.discoverIntervalMs }),
    logger: dispatcherLogger(options.logger, undefined),
  });
}

function dispatcherLogger(
  logger: StartServerOptions['logger'],
  tenant: string | undefined,
): DispatcherLogger {
  if (logger === undefined || logger === false) return silentLogger;
  const base = logger === true ? createLogger() : logger;
  return base.child(
    tenant === undefined ? { component: 'dispatcher' } : { component: 'dispatcher', tenant },
  );
}

/**
 * On a store without any token, and without a configured admin token, nobody could log in: an
 * admin and an operator token are created, in one step that only the first of several servers
 * starting at once on the empty store takes, and once per store, ever. null when the store had
 * tokens or made its first-run tokens before (even if they were all revoked since).
 */
export async function createFirstRunTokens(store: Store): Promise<FirstRunTokens | null> {
  // Always asked of the store, even when it has tokens: it marks then that its first run is past.
  const admin = newAdminToken('first-run admin token');
  const operator = newToken({
    tenant: FIRST_RUN_TENANT,
    role: 'operator',
    label: 'first-run operator token',
  });
  const created = await store.createTokensIfNone([admin.record, operator.record]);
  if (created === null) return null;
  return {
    adminToken: admin.token,
    adminTokenId: admin.record.id,
    operatorToken: operator.token,
    operatorTokenId: operator.record.id,
    operatorTenant: FIRST_RUN_TENANT,
  };
}

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function boundPort(app: FastifyInstance, requested: number): number {
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : requested;
}
