/**
 * A fencegate server on the in-memory reference store for the LangGraph suites over HTTP: a worker
 * token whose take-over right covers the thread scopes (`langgraph/`) and an operator token, of
 * one tenant; `close` verifies the tenant's audit log and stops everything.
 */
import { expect } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { memoryStore } from '../helpers/memory-store.js';

export interface HttpTenant {
  worker: FencegateClient;
  operator: FencegateClient;
  /** Verifies the tenant (no violation), then closes the clients, the server and the store. */
  close(): Promise<void>;
}

export async function startHttpTenant(): Promise<HttpTenant> {
  const store = memoryStore();
  const app = await buildServer({ store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = async (role: 'worker' | 'operator', mayTakeOver?: string[]) =>
    (await issueToken(store, { tenant: 'acme', role, mayTakeOver })).token;
  const worker = new FencegateClient({ url, token: await token('worker', ['langgraph/']) });
  const operator = new FencegateClient({ url, token: await token('operator') });
  return {
    worker,
    operator,
    async close() {
      expect((await operator.verify()).violations).toEqual([]);
      await worker.close();
      await operator.close();
      await app.close();
      await store.close();
    },
  };
}
