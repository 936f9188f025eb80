/**
 * A real server on the in-memory reference store, a worker token of tenant `acme`, and a lease on one
 * scope: what the tests of a worker's largest requests start from.
 */
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { bearerFetch } from './bearer-fetch.js';
import { memoryStore } from './memory-store.js';

export interface WorkerServer {
  app: FastifyInstance;
  store: Store;
  url: string;
  send: (method: string, path: string, body?: unknown) => Promise<Response>;
  /** The fence of the worker's lease on the scope. */
  fence: number;
  close(): Promise<void>;
}

export async function startWorkerServer(scope: string): Promise<WorkerServer> {
  const store = memoryStore();
  const app = await buildServer({ store });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const { token } = await issueToken(store, { tenant: 'acme', role: 'worker' });
  const send = bearerFetch(
    () => url,
    () => token,
  );
  const grant = await send('POST', '/v1/leases/acquire', { scope, holder: 'w', ttlMs: 600_000 });
  const { fence } = (await grant.json()) as { fence: number };
  return {
    app,
    store,
    url,
    send,
    fence,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}
