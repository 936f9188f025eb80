/**
 * A server listening on a loopback port over the in-memory reference store, with one worker token:
 * for the tests that speak raw HTTP over real sockets.
 */
import type { FastifyInstance } from 'fastify';
import { buildServer, type ServerOptions } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { memoryStore } from '../helpers/memory-store.js';

export interface ListeningServer {
  app: FastifyInstance;
  port: number;
  /** A worker token of tenant acme. */
  token: string;
  close: () => Promise<void>;
}

export async function listeningServer(
  options: Omit<ServerOptions, 'store'>,
): Promise<ListeningServer> {
  const store = memoryStore();
  const app = await buildServer({ store, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const { token } = await issueToken(store, { tenant: 'acme', role: 'worker' });
  return {
    app,
    port,
    token,
    close: async () => {
      await app.close();
      await store.close();
    },
  };
}
