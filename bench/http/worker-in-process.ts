/**
 * A fencegate server on a SQLite file, listening in this process, and a FencegateClient with a
 * worker token of its tenant: what the integration benchmarks measure "over HTTP" with.
 */
import type { FastifyInstance } from 'fastify';
import { FencegateClient } from '../../src/client/index.js';
import { Fencegate } from '../../src/gate.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';

export interface WorkerServer {
  client: FencegateClient;
  app: FastifyInstance;
  served: Fencegate;
}

export async function workerServer(path: string): Promise<WorkerServer> {
  const served = await Fencegate.open({ store: `sqlite:${path}` });
  const app = await buildServer({ store: served.store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const { token } = await issueToken(served.store, { tenant: served.tenant, role: 'worker' });
  const client = new FencegateClient({ url: `http://127.0.0.1:${port}`, token });
  return { client, app, served };
}
