/**
 * Opens the store, prepares first-run tokens, builds the server and starts listening. Closing the
 * running server lets in-flight requests finish, then closes the store.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { ManualClock } from '../testing/manual-clock.js';
import { buildServer, type ServerLimits } from './build-server.js';
import { issueAdminToken, issueToken } from './tokens.js';

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
  /** Stops accepting requests, lets in-flight ones finish, closes the store. Idempotent. */
  close(): Promise<void>;
}

export const FIRST_RUN_TENANT = 'dev';

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  // Concurrent requests share one durable transaction through the store's group commit.
  const store = await openStore(options.store, {
    groupCommit: true,
    ...(options.testClock === undefined ? {} : { clock: options.testClock }),
  });
  let app: FastifyInstance | undefined;
  try {
    const firstRun = options.adminToken === undefined ? await createFirstRunTokens(store) : null;
    app = await buildServer({
      store,
      ...(options.adminToken === undefined ? {} : { adminToken: options.adminToken }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.testClock === undefined ? {} : { testClock: options.testClock }),
      processMetrics: true,
    });
    await app.listen({ host: options.host, port: options.port });
    const url = `http://${urlHost(options.host)}:${boundPort(app, options.port)}`;
    const running = app;
    let closed: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      firstRun,
      close: () =>
        (closed ??= (async () => {
          try {
            await running.close();
          } finally {
            await store.close();
          }
        })()),
    };
  } catch (error) {
    await app?.close();
    await store.close();
    throw error;
  }
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
