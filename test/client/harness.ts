/**
 * A real server on the in-memory reference store with a manual store clock, listening on
 * 127.0.0.1, with an operator and a worker token of one tenant, a fault-injecting wrapper between
 * the server and the store, and optionally a FaultProxy in front of the server to lose requests or
 * replies on purpose.
 */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { FencegateClient } from '../../src/client/index.js';
import { buildServer, type ServerLimits } from '../../src/server/build-server.js';
import type { TenantRateLimit } from '../../src/server/tenant-rate-limit.js';
import { issueToken } from '../../src/server/tokens.js';
import { faultyStore, type FaultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { MemoryStore } from '../../src/store/memory/memory-store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { FaultProxy } from './fault-proxy.js';

export const TENANT = 'acme';

export interface OpsHarness {
  /** The real store (reads in tests bypass the faults). */
  store: MemoryStore;
  /** What the server talks to: the store behind injectable faults. */
  faults: FaultyStore;
  clock: ManualClock;
  app: FastifyInstance;
  url: string;
  proxy: FaultProxy | undefined;
  operatorToken: string;
  workerToken: string;
  /** A client through the proxy (when there is one) with the given role. */
  client(role: 'operator' | 'worker', options?: { retries?: number }): FencegateClient;
  /** Verifies every tenant's history (0 violations), then stops everything. */
  close(): Promise<void>;
}

export async function startHarness(
  options: {
    proxy?: boolean;
    limits?: Partial<ServerLimits>;
    tenantRateLimit?: TenantRateLimit;
  } = {},
): Promise<OpsHarness> {
  const clock = new ManualClock();
  const store = memoryStore(clock);
  const faults = faultyStore(store);
  const app = await buildServer({
    store: faults,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...(options.tenantRateLimit === undefined ? {} : { tenantRateLimit: options.tenantRateLimit }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const operatorToken = (await issueToken(store, { tenant: TENANT, role: 'operator' })).token;
  const workerToken = (await issueToken(store, { tenant: TENANT, role: 'worker' })).token;
  const proxy = options.proxy === true ? new FaultProxy(url) : undefined;
  const clientUrl = proxy === undefined ? url : await proxy.start();
  return {
    store,
    faults,
    clock,
    app,
    url,
    proxy,
    operatorToken,
    workerToken,
    client: (role, clientOptions = {}) =>
      new FencegateClient({
        url: clientUrl,
        token: role === 'operator' ? operatorToken : workerToken,
        retries: clientOptions.retries ?? 3,
      }),
    async close() {
      try {
        const result = await verifyStore(store);
        expect(result.violations).toEqual([]);
      } finally {
        await proxy?.stop();
        await app.close();
        await store.close();
      }
    },
  };
}
