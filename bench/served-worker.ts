/**
 * A fencegate server in this process on a SQLite file of its own, and a FencegateClient with a
 * worker token of its tenant: what the benchmarks measure "over HTTP" with.
 */
import { join } from 'node:path';
import { FencegateClient } from '../src/client/index.js';
import { Fencegate } from '../src/gate.js';
import { buildServer } from '../src/server/build-server.js';
import { issueToken } from '../src/server/tokens.js';
import { violationsIn } from './verified-history.js';

export interface ServedWorker {
  client: FencegateClient;
  /** Violations `verify` finds in the history of the server's store (call it before `close`). */
  violations(): Promise<number>;
  /** Closes the client, the server and its store. */
  close(): Promise<void>;
}

export async function servedWorker(dir: string): Promise<ServedWorker> {
  const served = await Fencegate.open({ store: `sqlite:${join(dir, 'server.db')}` });
  const app = await buildServer({ store: served.store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const { token } = await issueToken(served.store, { tenant: served.tenant, role: 'worker' });
  const client = new FencegateClient({ url: `http://127.0.0.1:${port}`, token });
  return {
    client,
    violations: () => violationsIn(served.store),
    async close() {
      await client.close();
      await app.close();
      await served.close();
    },
  };
}
