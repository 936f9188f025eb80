/**
 * The TypeScript client's coalescing window (`coalesceWindowMs`), counted at a proxy in front of a
 * real server: with 1 ms, commits issued in separate turns of the event loop within the window
 * leave as one `POST /v1/commits`; by default only those of one turn go together; with
 * `coalesceCommits: false` each goes alone; a window out of range is refused when the client is
 * made. Which commits share a window is fixed by the phases of the event loop, not by timing: the
 * commits start in a timers callback, the later ones in check callbacks of the same loop iteration,
 * which always run before the next timers phase, where a 1 ms window can end at the earliest.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/client.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { CommitRequest, CommitResult, Grant } from '../../src/types.js';
import { FaultProxy } from '../client/fault-proxy.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `n` commits, each writing its own record of the grant's scope. */
function commits(grant: Grant, tag: string, n: number): CommitRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    scope: grant.scope,
    fence: grant.fence,
    operationId: `${tag}-${i}`,
    writes: [{ name: `${tag}-${i}`, expectRevision: 0, value: i }],
  }));
}

/** Runs `start` in a timers callback: the check callbacks it schedules run in this iteration. */
function fromTimersPhase<T>(start: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    setTimeout(() => void start().then(resolve, reject), 0);
  });
}

/** `request` committed from a check callback of its own: a later turn of the event loop. */
function inNextTurn(client: FencegateClient, request: CommitRequest): Promise<CommitResult> {
  return new Promise<CommitResult>((resolve, reject) => {
    setImmediate(() => void client.commit(request).then(resolve, reject));
  });
}

describe.each(ONE_STORE)('the coalescing window of the TypeScript client, on $name', (kind) => {
  const stores = storesFor(kind, 'coalesce_window');

  async function fixture(): Promise<{
    proxy: FaultProxy;
    client(options?: { coalesceWindowMs?: number; coalesceCommits?: boolean }): FencegateClient;
    grant: Grant;
    /** Requests the proxy passed to `/v1/commit` and to `/v1/commits`. */
    sent(): { alone: number; batches: number };
  }> {
    const { store } = await stores.open({ groupCommit: true });
    const app = await buildServer({ store });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const proxy = new FaultProxy(url);
    const proxyUrl = await proxy.start();
    cleanups.push(async () => {
      await proxy.stop();
      await app.close();
      await store.close();
    });
    const token = (await issueToken(store, { tenant: 'acme', role: 'worker' })).token;
    const client = (options = {}) => new FencegateClient({ url: proxyUrl, token, ...options });
    const grant = await client().acquire({ scope: 'window', holder: 'w', ttlMs: 600_000 });
    const count = (route: string) =>
      proxy.log.filter((line) => line.split(' ')[1]?.split('?')[0] === route).length;
    return {
      proxy,
      client,
      grant,
      sent: () => ({ alone: count('/v1/commit'), batches: count('/v1/commits') }),
    };
  }

  it('with a window of 1 ms, commits of separate turns within it leave as one POST /v1/commits', async () => {
    const fx = await fixture();
    const client = fx.client({ coalesceWindowMs: 1 });
    const [first, second, third] = commits(fx.grant, 'w1', 3);
    const results = await fromTimersPhase(() =>
      Promise.all([client.commit(first!), inNextTurn(client, second!), inNextTurn(client, third!)]),
    );
    expect(fx.sent()).toEqual({ alone: 0, batches: 1 });
    // Each caller has its own answer.
    expect(results.map((r) => [r.operationId, r.outcome, r.replayed])).toEqual([
      ['w1-0', 'committed', false],
      ['w1-1', 'committed', false],
      ['w1-2', 'committed', false],
    ]);
  });

  it('by default the commits of one turn go together and a commit of the next turn goes on its own', async () => {
    const fx = await fixture();
    const client = fx.client();
    const [first, second, later] = commits(fx.grant, 'w0', 3);
    const results = await fromTimersPhase(() =>
      Promise.all([client.commit(first!), client.commit(second!), inNextTurn(client, later!)]),
    );
    // The first two in one batch; the third, alone in its turn, over POST /v1/commit.
    expect(fx.sent()).toEqual({ alone: 1, batches: 1 });
    expect(results.map((r) => r.outcome)).toEqual(['committed', 'committed', 'committed']);
  });

  it('coalesceCommits: false sends each commit alone, whatever the window', async () => {
    const fx = await fixture();
    const client = fx.client({ coalesceCommits: false, coalesceWindowMs: 1 });
    const results = await fromTimersPhase(() =>
      Promise.all(commits(fx.grant, 'off', 3).map((request) => client.commit(request))),
    );
    expect(fx.sent()).toEqual({ alone: 3, batches: 0 });
    expect(results.map((r) => r.outcome)).toEqual(['committed', 'committed', 'committed']);
  });

  it('a window out of 0 to 1 ms is refused when the client is made, coalescing on or off, with a RangeError naming it', async () => {
    const fx = await fixture();
    for (const coalesceWindowMs of [2, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      // With coalescing off too: the wrong value is found where it is written.
      for (const coalesceCommits of [true, false]) {
        const make = () => fx.client({ coalesceWindowMs, coalesceCommits });
        expect(make).toThrow(RangeError);
        expect(make).toThrow(
          `coalesceWindowMs must be 0 to 1 (0: the rest of this turn of the event loop), not ${coalesceWindowMs}`,
        );
      }
    }
    for (const coalesceWindowMs of [0, 0.5, 1])
      expect(() => fx.client({ coalesceWindowMs })).not.toThrow();
    expect(fx.sent()).toEqual({ alone: 0, batches: 0 });
  });
});
