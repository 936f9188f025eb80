/**
 * A real server on an in-memory SQLite store, a worker token of tenant `acme`, and a lease on one
 * scope: what the tests of a worker's largest requests start from. Not the in-memory reference
 * store: these tests bound the process's resident memory while the largest answers are built, and
 * the reference store keeps every value in the JavaScript heap and copies it on each read, so the
 * bound would measure its copies (and when the collector got to them), not the server's budget.
 */
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { bearerFetch } from './bearer-fetch.js';

export interface WorkerServer {
  app: FastifyInstance;
  store: SqliteStore;
  url: string;
  send: (method: string, path: string, body?: unknown) => Promise<Response>;
  /** The fence of the worker's lease on the scope. */
  fence: number;
  close(): Promise<void>;
}

export async function startWorkerServer(scope: string): Promise<WorkerServer> {
  const store = SqliteStore.open({ path: ':memory:' });
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
