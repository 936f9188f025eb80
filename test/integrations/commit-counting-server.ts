/**
 * A fencegate server on the in-memory reference store that counts the commit requests it answered:
 * how many came alone (`POST /v1/commit`), how many as batches (`POST /v1/commits`) and how many
 * commits those batches carried. Counted at the server, so what is counted is what the client
 * really sent, whatever path inside the client produced it.
 */
import { expect } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { FencegateClient } from '../../src/client/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { memoryStore } from '../helpers/memory-store.js';

export interface CommitCounts {
  /** `POST /v1/commit` requests. */
  alone: number;
  /** `POST /v1/commits` requests. */
  batches: number;
  /** Commits the batches carried, all of them together. */
  batched: number;
}

export interface CommitCountingServer {
  /** A worker of tenant `acme`, coalescing its commits or not as the server was started with. */
  worker: FencegateClient;
  /** Another worker of the same tenant, for reading back apart from the writer's client. */
  reader: FencegateClient;
  /** What was counted since the last `resetCounts` (or the start). */
  counts(): CommitCounts;
  resetCounts(): void;
  /** Verifies the store (no violation), then closes the clients, the server and the store. */
  close(): Promise<void>;
}

export async function startCommitCountingServer(options: {
  coalesceCommits: boolean;
}): Promise<CommitCountingServer> {
  const store = memoryStore();
  const app = await buildServer({ store });
  let counts: CommitCounts = { alone: 0, batches: 0, batched: 0 };
  app.addHook('onResponse', (request, _reply, done) => {
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    if (route === 'POST /v1/commit') counts.alone += 1;
    if (route === 'POST /v1/commits') {
      counts.batches += 1;
      counts.batched += (request.body as { commits?: unknown[] } | undefined)?.commits?.length ?? 0;
    }
    done();
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = async () => (await issueToken(store, { tenant: 'acme', role: 'worker' })).token;
  const worker = new FencegateClient({
    url,
    token: await token(),
    coalesceCommits: options.coalesceCommits,
  });
  const reader = new FencegateClient({ url, token: await token() });
  return {
    worker,
    reader,
    counts: () => ({ ...counts }),
    resetCounts() {
      counts = { alone: 0, batches: 0, batched: 0 };
    },
    async close() {
      try {
        expect((await verifyStore(store)).violations).toEqual([]);
      } finally {
        await worker.close();
        await reader.close();
        await app.close();
        await store.close();
      }
    },
  };
}
