/**
 * An in-process server on the in-memory reference store with a manual clock (or on a SQLite file,
 * for tests that open it a second time), and tokens for two tenants in both roles. Requests go
 * through fastify.inject: the whole HTTP stack without sockets.
 */
import { Writable } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  InjectOptions,
  LightMyRequestResponse,
} from 'fastify';
import { expect } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/errors.js';
import { buildServer, type ServerLimits } from '../../src/server/build-server.js';
import { createLogger } from '../../src/server/logger.js';
import { ErrorBody } from '../../src/server/schemas/common.js';
import type { StoreGaugesOptions } from '../../src/server/store-gauges.js';
import { hashToken, issueToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { memoryStore } from '../helpers/memory-store.js';

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
  /** A SQLite file instead of an in-memory store (for tests that open it a second time). */
  path?: string;
  /** How often /metrics' store gauges are refreshed in the background. */
  storeGauges?: StoreGaugesOptions;
}

/** The server's own logger (createLogger) writing its JSON lines into `lines`, for tests that read them. */
export function capturedLogger(level = 'info'): { logger: FastifyBaseLogger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger(level, destination), lines };
}

export async function serverFixture(options: FixtureOptions = {}): Promise<ServerFixture> {
  const clock = new ManualClock();
  const inner =
    options.path === undefined
      ? memoryStore(clock)
      : SqliteStore.open({ path: options.path, clock });
  const store = options.wrapStore?.(inner) ?? inner;
  const app = await buildServer({
    store,
    adminToken: ADMIN_TOKEN,
    testClock: clock,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.storeGauges === undefined ? {} : { storeGauges: options.storeGauges }),
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

/** Checks the status and that the body matches the answer schema; returns the body. */
export function expectShape(
  response: LightMyRequestResponse,
  status: number,
  schema: TSchema,
): unknown {
  expect({ status: response.statusCode, body: response.body.slice(0, 500) }).toMatchObject({
    status,
  });
  const body = response.json<unknown>();
  const checker = TypeCompiler.Compile(schema);
  expect([...checker.Errors(body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  return body;
}

/** Checks an error answer: the one error body, with the catalog status of `code`. */
export function expectError(response: LightMyRequestResponse, code: ErrorCode): void {
  expectShape(response, ERROR_CATALOG[code].httpStatus, ErrorBody);
  expect(errorOf(response).code).toBe(code);
}

/** The id the store keeps for a token (what the server records as registeredBy). */
export async function tokenIdOf(fx: ServerFixture, token: string): Promise<string> {
  const record = await fx.store.findToken(hashToken(token));
  if (record === null) throw new Error('unknown token');
  return record.id;
}

/** Every tenant's audit history must verify with no violation: the end of each HTTP test. */
export async function expectHistoryValid(fx: ServerFixture): Promise<void> {
  const result = await verifyStore(fx.store);
  expect(result.violations).toEqual([]);
  expect(result.ok).toBe(true);
}
