/**
 * Opens the store, prepares first-run tokens, builds the server, starts listening and, with
 * `dispatch`, runs one dispatcher per tenant in the same process. Closing the running server stops
 * the dispatchers first (they finish recording in-flight deliveries), then lets in-flight requests
 * finish, then closes the store.
 */
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
import { loadTargets } from '../dispatch/targets.js';
import { fail } from '../errors.js';
import { Fencegate } from '../gate.js';
import { startOutcomePruner } from '../retention/outcome-pruner.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { ManualClock } from '../testing/manual-clock.js';
import { buildServer, type ServerLimits } from './build-server.js';
import { createLogger } from './logger.js';
import { issueAdminToken, issueToken } from './tokens.js';

/** `fencegate serve --dispatch`: dispatchers in the server process, on the server's store. */
export interface ServeDispatchOptions {
  /** The operator's targets file: the only URLs the dispatchers call (docs/dispatch.md). */
  targetsFile: string;
  /** One dispatcher per tenant. */
  tenants: readonly string[];
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
}

/** Tokens created because the store had none and no admin token was configured. */
export interface FirstRunTokens {
  adminToken: string;
  operatorToken: string;
  operatorTenant: string;
}

export interface RunningServer {
  app: FastifyInstance;
  store: Store;
  /** http://HOST:PORT, with the port actually bound. */
  url: string;
  firstRun: FirstRunTokens | null;
  /** The dispatchers started by `dispatch`, one per tenant (empty without it). */
  dispatchers: readonly RunningDispatcher[];
  /**
   * Stops the dispatchers (in-flight deliveries are recorded), stops accepting requests, lets
   * in-flight ones finish, closes the store. Idempotent.
   */
  close(): Promise<void>;
}

export const FIRST_RUN_TENANT = 'dev';

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { dispatch } = options;
  if (dispatch !== undefined) {
    // A bad targets file or tenant is refused before anything is opened or bound.
    await loadTargets(dispatch.targetsFile);
    if (dispatch.tenants.length === 0) {
      fail('invalid_request', 'dispatch needs at least one tenant', { field: 'tenants' });
    }
    for (const tenant of dispatch.tenants) requireTenant(tenant);
  }
  // Concurrent requests share one durable transaction through the store's group commit.
  const store = await openStore(options.store, {
    groupCommit: true,
    ...(options.testClock === undefined ? {} : { clock: options.testClock }),
  });
  let app: FastifyInstance | undefined;
  const dispatchers: RunningDispatcher[] = [];
  try {
    const firstRun = options.adminToken === undefined ? await createFirstRunTokens(store) : null;
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
    });
    await app.listen({ host: options.host, port: options.port });
    const url = `http://${urlHost(options.host)}:${boundPort(app, options.port)}`;
    if (dispatch !== undefined) {
      dispatchers.push(
        ...(await startDispatchers(store, dispatch, registry, options.logger, options.limits)),
      );
    }
    const running = app;
    const stopPruner =
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
    let closed: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      firstRun,
      dispatchers,
      close: () =>
        (closed ??= (async () => {
          try {
            // Before the store closes: a dispatcher records its in-flight outcomes through it.
            await stopAll(dispatchers);
            await stopPruner();
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
    await stopAll(dispatchers);
    await app?.close();
    await store.close();
    throw error;
  }
}

async function startDispatchers(
  store: Store,
  dispatch: ServeDispatchOptions,
  registry: Registry,
  logger: StartServerOptions['logger'],
  limits: Partial<ServerLimits> | undefined,
): Promise<RunningDispatcher[]> {
  // A handle on the server's store; never closed here, since the server owns the store.
  const base = await Fencegate.open({ store, limits: { ...DEFAULT_LIMITS, ...limits } });
  const metrics = new PromDispatcherMetrics(registry);
  const started: RunningDispatcher[] = [];
  try {
    for (const tenant of dispatch.tenants) {
      started.push(
        await startDispatcherFromTargets({
          api: base.forTenant(tenant),
          targetsFile: dispatch.targetsFile,
          ...(dispatch.dispatcherId === undefined ? {} : { dispatcherId: dispatch.dispatcherId }),
          logger: dispatcherLogger(logger, tenant),
          metrics,
          ...(dispatch.tuning === undefined ? {} : { tuning: dispatch.tuning }),
        }),
      );
    }
  } catch (error) {
    await stopAll(started);
    throw error;
  }
  return started;
}

async function stopAll(dispatchers: readonly RunningDispatcher[]): Promise<void> {
  await Promise.all(dispatchers.map((running) => running.stop()));
}

function dispatcherLogger(logger: StartServerOptions['logger'], tenant: string): DispatcherLogger {
  if (logger === undefined || logger === false) return silentLogger;
  const base = logger === true ? createLogger() : logger;
  return base.child({ component: 'dispatcher', tenant });
}

/** On a store without any token, and without a configured admin token, nobody could log in. */
async function createFirstRunTokens(store: Store): Promise<FirstRunTokens | null> {
  if ((await store.countTokens()) > 0) return null;
  const admin = await issueAdminToken(store, 'first-run admin token');
  const operator = await issueToken(store, {
    tenant: FIRST_RUN_TENANT,
    role: 'operator',
    label: 'first-run operator token',
  });
  return {
    adminToken: admin.token,
    operatorToken: operator.token,
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
