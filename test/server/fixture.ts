/**
 * An in-process server on a real in-memory SQLite store with a manual clock, and tokens for two
 * tenants in both roles. Requests go through fastify.inject: the whole HTTP stack without sockets.
 */
import type {
  FastifyBaseLogger,
  FastifyInstance,
  InjectOptions,
  LightMyRequestResponse,
} from 'fastify';
import { buildServer, type ServerLimits } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

export interface Tokens {
  operatorA: string;
  workerA: string;
  operatorB: string;
  workerB: string;
}

export interface ServerFixture {
  app: FastifyInstance;
  store: Store;
  clock: ManualClock;
  tokens: Tokens;
  /** Sends a request with a bearer token (none when `token` is null). */
  send(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    token: string | null,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  /** Wraps the real store (fault injection). */
  wrapStore?: (store: Store) => Store;
  logger?: FastifyBaseLogger;
  limits?: Partial<ServerLimits>;
}

export async function serverFixture(options: FixtureOptions = {}): Promise<ServerFixture> {
  const clock = new ManualClock();
  const inner = SqliteStore.open({ path: ':memory:', clock });
  const store = options.wrapStore?.(inner) ?? inner;
  const app = await buildServer({
    store,
    adminToken: ADMIN_TOKEN,
    testClock: clock,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const token = async (tenant: string, role: 'worker' | 'operator') =>
    (await issueToken(inner, { tenant, role })).token;
  const tokens: Tokens = {
    operatorA: await token('tenant-a', 'operator'),
    workerA: await token('tenant-a', 'worker'),
    operatorB: await token('tenant-b', 'operator'),
    workerB: await token('tenant-b', 'worker'),
  };
  return {
    app,
    store: inner,
    clock,
    tokens,
    send: (method, url, bearer, body, headers = {}) => {
      const request: InjectOptions = {
        method,
        url,
        headers: { ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }), ...headers },
      };
      if (body !== undefined)
        request.payload = typeof body === 'string' ? body : JSON.stringify(body);
      if (body !== undefined && headers['content-type'] === undefined) {
        request.headers = { ...request.headers, 'content-type': 'application/json' };
      }
      return app.inject(request);
    },
    async close() {
      await app.close();
      await inner.close();
    },
  };
}

/** The `error` of an error answer. */
export function errorOf(response: LightMyRequestResponse): {
  code: string;
  message: string;
  details: unknown;
} {
  return response.json<{ error: { code: string; message: string; details: unknown } }>().error;
}
