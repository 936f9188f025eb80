/**
 * The TypeScript client and a 429 that is not fencegate's: a gateway in front of a real server
 * answers `429 Too Many Requests` with only a `Retry-After` header (seconds, or an HTTP date), no
 * fencegate body. The client waits what the header asks and sends the same request again, under
 * the same budget as for the server's own 429; past the budget the call fails rate_limited and a
 * commit is neither looked up nor abandoned. Times are only checked from below: a loaded machine
 * makes the client later, never earlier.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/client.js';
import { MAX_WAIT_MS, MIN_WAIT_MS, rateLimitWaitMs } from '../../src/client/rate-limit-wait.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import type { CommitRequest, Grant } from '../../src/types.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';
import { FaultProxy } from './fault-proxy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function commitOf(grant: Grant, operationId: string): CommitRequest {
  return {
    scope: grant.scope,
    fence: grant.fence,
    operationId,
    writes: [{ name: operationId, expectRevision: 0, value: 1 }],
  };
}

describe.each(ONE_STORE)(
  'a gateway 429 with Retry-After and no fencegate body, on $name',
  (kind) => {
    const stores = storesFor(kind, 'retry_after');

    async function fixture(): Promise<{
      store: Store;
      gateway: FaultProxy;
      /** A client through the gateway. */
      client(options?: { rateLimitWaitMs?: number }): FencegateClient;
      /** A client straight to the server, to look behind the gateway. */
      direct: FencegateClient;
      grant: Grant;
    }> {
      const { store } = await stores.open({ groupCommit: true });
      const app: FastifyInstance = await buildServer({ store });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const gateway = new FaultProxy(url);
      const gatewayUrl = await gateway.start();
      cleanups.push(async () => {
        await gateway.stop();
        await app.close();
        await store.close();
      });
      const token = (await issueToken(store, { tenant: 'acme', role: 'worker' })).token;
      const direct = new FencegateClient({ url, token });
      const grant = await direct.acquire({ scope: 'ra/1', holder: 'w', ttlMs: 600_000 });
      return {
        store,
        gateway,
        client: (options = {}) => new FencegateClient({ url: gatewayUrl, token, ...options }),
        direct,
        grant,
      };
    }

    it('waits the seconds of Retry-After and sends the same commit, and the same batch, again', async () => {
      const fx = await fixture();
      fx.gateway.refuse('POST', '/v1/commit', () => '1');
      const client = fx.client();
      const result = await client.commit(commitOf(fx.grant, 'ra-one'));
      expect(result).toMatchObject({ outcome: 'committed', replayed: false });
      const [refused, sent] = fx.gateway.at('/v1/commit');
      expect(refused?.retryAfter).toBe('1');
      expect(sent?.retryAfter).toBeNull();
      expect(sent!.at - refused!.at).toBeGreaterThanOrEqual(990);
      // Nothing changed at the first attempt: not looked up, not abandoned.
      expect(fx.gateway.at('/v1/operations')).toEqual([]);
      // A batch waits the same way: one refused request, then the same batch, applied once.
      fx.gateway.refuse('POST', '/v1/commits', () => '1');
      const answers = await client.commitMany([
        commitOf(fx.grant, 'ra-b0'),
        commitOf(fx.grant, 'ra-b1'),
      ]);
      expect(answers).toMatchObject([
        { ok: true, result: { outcome: 'committed', replayed: false } },
        { ok: true, result: { outcome: 'committed', replayed: false } },
      ]);
      expect(fx.gateway.at('/v1/commits').map((a) => a.retryAfter)).toEqual(['1', null]);
      for (const name of ['ra-one', 'ra-b0', 'ra-b1']) {
        expect((await fx.store.getRecord('acme', fx.grant.scope, name)).revision).toBe(1);
      }
    });

    it('waits until the HTTP date of Retry-After', async () => {
      const fx = await fixture();
      // An HTTP date has whole seconds: two seconds ahead, cut to the second, is at least one ahead.
      fx.gateway.refuse('GET', '/v1/scopes/', () => new Date(Date.now() + 2000).toUTCString());
      const scope = await fx.client().getScope(fx.grant.scope);
      expect(scope).toMatchObject({ scope: fx.grant.scope, fence: fx.grant.fence });
      const [refused, sent] = fx.gateway.at('/v1/scopes/');
      const until = Date.parse(refused!.retryAfter!);
      expect(until - refused!.at).toBeGreaterThanOrEqual(1000);
      // Node may run a timer a millisecond early.
      expect(sent!.at).toBeGreaterThanOrEqual(until - 2);
    });

    it('a wait past the budget fails rate_limited at once; the commit is not abandoned and commits later', async () => {
      const fx = await fixture();
      // 30 s is cut to the longest single wait, which is past a budget of 5 s.
      fx.gateway.refuse('POST', '/v1/commit', () => '30');
      const request = commitOf(fx.grant, 'ra-budget');
      await expect(fx.client({ rateLimitWaitMs: 5_000 }).commit(request)).rejects.toMatchObject({
        code: 'rate_limited',
        details: { status: 429 },
      });
      expect(fx.gateway.at('/v1/commit')).toHaveLength(1);
      expect(fx.gateway.at('/v1/operations')).toEqual([]);
      expect(await fx.direct.getOperation('ra-budget')).toBeNull();
      expect(await fx.client().commit(request)).toMatchObject({
        outcome: 'committed',
        replayed: false,
      });
    });
  },
);

describe('the wait a 429 asks for', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const bare = (retryAfter?: string) => ({
    status: 429,
    body: undefined,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
  const fencegate = (details: Record<string, unknown>, retryAfter?: string) => ({
    ...bare(retryAfter),
    body: { error: { code: 'rate_limited', message: 'over its rate', details } },
  });

  it('takes retryAfterMs of the body first, then Retry-After in seconds or as an HTTP date', () => {
    expect(rateLimitWaitMs(fencegate({ retryAfterMs: 250 }, '3'), now)).toBe(250);
    expect(rateLimitWaitMs(fencegate({}, '3'), now)).toBe(3000);
    expect(rateLimitWaitMs(bare('2'), now)).toBe(2000);
    expect(rateLimitWaitMs(bare(new Date(now + 4000).toUTCString()), now)).toBe(4000);
    // A date already past, or 0: the shortest wait, so a broken proxy cannot make the client
    // spin; a wait is never longer than MAX_WAIT_MS.
    expect(rateLimitWaitMs(bare(new Date(now - 4000).toUTCString()), now)).toBe(MIN_WAIT_MS);
    expect(rateLimitWaitMs(bare('0'), now)).toBe(MIN_WAIT_MS);
    expect(rateLimitWaitMs(fencegate({ retryAfterMs: 0 }), now)).toBe(MIN_WAIT_MS);
    expect(rateLimitWaitMs(bare('3600'), now)).toBe(MAX_WAIT_MS);
    // A negative retryAfterMs is no answer: the header, else a second.
    expect(rateLimitWaitMs(fencegate({ retryAfterMs: -5 }, '2'), now)).toBe(2000);
    expect(rateLimitWaitMs(fencegate({ retryAfterMs: -5 }), now)).toBe(1000);
  });

  it('a wait budget or a body limit out of range is refused when the client is made', () => {
    const made = (options: { rateLimitWaitMs?: number; maxBodyBytes?: number }) => () =>
      new FencegateClient({ url: 'http://127.0.0.1:1', token: 't', ...options });
    for (const rateLimitWaitMs of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      expect(made({ rateLimitWaitMs })).toThrow(RangeError);
    }
    for (const maxBodyBytes of [0, -1, 1023, 2048.5, Number.NaN, 65 * 1024 * 1024]) {
      expect(made({ maxBodyBytes })).toThrow(RangeError);
    }
    expect(made({ rateLimitWaitMs: 0, maxBodyBytes: 1024 })).not.toThrow();
  });

  it('a 429 without a fencegate body or a Retry-After it can read is not waited on', () => {
    expect(rateLimitWaitMs(bare(), now)).toBeNull();
    expect(rateLimitWaitMs(bare('soon'), now)).toBeNull();
    // fencegate's own body without a number: a second.
    expect(rateLimitWaitMs(fencegate({}), now)).toBe(1000);
    expect(rateLimitWaitMs({ status: 503, body: undefined, retryAfter: '1' }, now)).toBeNull();
  });
});
