/**
 * Commits a second from callers that each commit one after another: through one FencegateClient
 * that coalesces concurrent commits (`POST /v1/commits`), and, as the baseline, through the library
 * in this process on a durable SQLite file (FULL) with group commit, as the server runs its store.
 */
import { join } from 'node:path';
import { FencegateClient } from '../../src/client/client.js';
import { Fencegate } from '../../src/gate.js';
import { openStore } from '../../src/store/open.js';
import type { CommitRequest, CommitResult } from '../../src/types.js';
import type { ServerReady } from './server-process.js';

export interface CallerRate {
  commitsPerSec: number;
  /** Commits not answered `committed`. */
  failures: number;
}

/** `callers` loops of `commit` until `seconds` have passed; commits a second over the run. */
async function callersFor(
  callers: number,
  seconds: number,
  scopes: readonly { scope: string; fence: number }[],
  run: string,
  commit: (request: CommitRequest) => Promise<CommitResult>,
): Promise<CallerRate> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let failures = 0;
  let n = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      const target = scopes[caller % scopes.length]!;
      while (performance.now() < deadline) {
        n += 1;
        const result = await commit({
          scope: target.scope,
          fence: target.fence,
          operationId: `${run}-op-${n}`,
          writes: [
            {
              name: `${run}-r-${n}`,
              expectRevision: 0,
              value: { n, text: 'a small record value' },
            },
          ],
        }).catch(() => undefined);
        if (result?.outcome === 'committed') done += 1;
        else failures += 1;
      }
    }),
  );
  return { commitsPerSec: done / ((performance.now() - started) / 1000), failures };
}

/** One coalescing client of the server, `callers` callers. */
export async function measureCoalesced(
  ready: ServerReady,
  callers: number,
  seconds: number,
  run: string,
): Promise<CallerRate> {
  const client = new FencegateClient({ url: ready.url, token: ready.token });
  return await callersFor(callers, seconds, ready.scopes, run, (request) => client.commit(request));
}

/** The in-process baseline: the library on a durable SQLite file with group commit. */
export class InProcessGroupCommit {
  private constructor(
    private readonly gate: Fencegate,
    private readonly scopes: { scope: string; fence: number }[],
  ) {}

  static async open(dir: string, scopes: number): Promise<InProcessGroupCommit> {
    const store = await openStore(`sqlite:${join(dir, 'in-process.db')}`, { groupCommit: true });
    const gate = await Fencegate.open({ store, tenant: 'bench' });
    const grants = await Promise.all(
      Array.from({ length: scopes }, (_, i) =>
        gate.acquire({ scope: `in-process-${i}`, holder: 'bench', ttlMs: 86_400_000 }),
      ),
    );
    return new InProcessGroupCommit(
      gate,
      grants.map(({ scope, fence }) => ({ scope, fence })),
    );
  }

  async measure(callers: number, seconds: number, run: string): Promise<CallerRate> {
    return await callersFor(callers, seconds, this.scopes, run, (request) =>
      this.gate.commit(request),
    );
  }

  async close(): Promise<void> {
    await this.gate.close();
  }
}
