/**
 * A fencegate server on an existing store, and clients of one tenant with a worker and an
 * operator token: what the integrations see when they run in another process than the store.
 */
import { FencegateClient } from '../../src/client/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';

export interface HttpGate {
  worker: FencegateClient;
  operator: FencegateClient;
  close(): Promise<void>;
}

export async function startHttpGate(store: Store, tenant: string): Promise<HttpGate> {
  const app = await buildServer({ store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const client = async (role: 'worker' | 'operator') =>
    new FencegateClient({ url, token: (await issueToken(store, { tenant, role })).token });
  return {
    worker: await client('worker'),
    operator: await client('operator'),
    close: () => app.close(),
  };
}
