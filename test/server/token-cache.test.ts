/**
 * The token lookup cache: repeated requests do not read the token table, a token deleted through
 * this server stops working at once, one deleted elsewhere stops working within the bound, and a
 * lookup racing a deletion does not bring the deleted token back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/server/build-server.js';
import { TokenCache } from '../../src/server/token-cache.js';
import { hashToken, issueToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import type { TokenRecord } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { ADMIN_TOKEN, serverFixture, type ServerFixture } from './fixture.js';

/** A real store whose token reads are counted. */
function countingStore(store: Store) {
  const counter = { reads: 0 };
  return {
    counter,
    findToken: (hash: string) => {
      counter.reads += 1;
      return store.findToken(hash);
    },
  };
}

describe('TokenCache', () => {
  const stores: Store[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  const open = () => {
    const store = memoryStore();
    stores.push(store);
    return store;
  };

  it('answers repeated lookups from memory until the bound, then reads the store again', async () => {
    const store = open();
    const { record, token } = await issueToken(store, { tenant: 'acme', role: 'worker' });
    const counting = countingStore(store);
    let now = 0;
    const cache = new TokenCache(counting, 1000, () => now);
    for (let i = 0; i < 5; i++)
      expect((await cache.findToken(hashToken(token)))?.id).toBe(record.id);
    expect(counting.counter.reads).toBe(1);
    // Deleted elsewhere: still trusted inside the bound, refused after it.
    await store.deleteToken(record.id);
    now = 999;
    expect(await cache.findToken(hashToken(token))).not.toBeNull();
    now = 1000;
    expect(await cache.findToken(hashToken(token))).toBeNull();
    expect(counting.counter.reads).toBe(2);
  });

  it('gives a remembered record at once only inside the bound and until invalidated', async () => {
    const store = open();
    const { record, token } = await issueToken(store, { tenant: 'acme', role: 'worker' });
    let now = 0;
    const cache = new TokenCache(store, 1000, () => now);
    const hash = hashToken(token);
    expect(cache.cached(hash)).toBeUndefined();
    await cache.findToken(hash);
    expect(cache.cached(hash)?.id).toBe(record.id);
    now = 1000;
    expect(cache.cached(hash)).toBeUndefined();
    await cache.findToken(hash);
    cache.invalidate();
    expect(cache.cached(hash)).toBeUndefined();
  });

  it('never remembers an unknown token, and with a bound of 0 always reads the store', async () => {
    const store = open();
    const counting = countingStore(store);
    const cache = new TokenCache(counting, 1000, () => 0);
    expect(await cache.findToken(hashToken('fg_unknown'))).toBeNull();
    const { token } = await issueToken(store, { tenant: 'acme', role: 'worker' });
    expect(await cache.findToken(hashToken(token))).not.toBeNull();
    const uncached = new TokenCache(counting, 0, () => 0);
    const before = counting.counter.reads;
    await uncached.findToken(hashToken(token));
    await uncached.findToken(hashToken(token));
    expect(counting.counter.reads - before).toBe(2);
  });

  it('does not keep the answer of a lookup that was under way when it was invalidated', async () => {
    const record: TokenRecord = {
      id: 'tok_1',
      tenant: 'acme',
      role: 'worker',
      label: null,
      hash: 'h',
      createdAt: 0,
    };
    let release: (value: TokenRecord | null) => void = () => undefined;
    let reads = 0;
    const slow = {
      findToken: () => {
        reads += 1;
        return new Promise<TokenRecord | null>((resolve) => (release = resolve));
      },
    };
    const cache = new TokenCache(slow, 60_000, () => 0);
    const lookup = cache.findToken('h');
    cache.invalidate();
    release(record);
    expect(await lookup).toEqual(record);
    // The racing answer was not kept: the next lookup reads again.
    const again = cache.findToken('h');
    release(null);
    expect(await again).toBeNull();
    expect(reads).toBe(2);
  });
});

describe('token cache in the server', () => {
  let fx: ServerFixture | undefined;
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('stops a token deleted through this server at once, though it was just used', async () => {
    fx = await serverFixture();
    const created = (
      await fx.send('POST', '/v1/admin/tokens', ADMIN_TOKEN, { tenant: 'acme', role: 'worker' })
    ).json<{ id: string; token: string }>();
    for (let i = 0; i < 3; i++)
      expect((await fx.send('GET', '/v1/scopes', created.token)).statusCode).toBe(200);
    expect(
      (await fx.send('DELETE', `/v1/admin/tokens/${created.id}`, ADMIN_TOKEN)).statusCode,
    ).toBe(200);
    expect((await fx.send('GET', '/v1/scopes', created.token)).statusCode).toBe(401);
  });

  it('stops a token deleted through another server on the same store within the bound', async () => {
    // Two handles on one SQLite file: the deletion reaches the store through another connection.
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const path = `${dir.path}/tokens.db`;
    const here = SqliteStore.open({ path });
    const there = SqliteStore.open({ path });
    cleanups.push(
      () => here.close(),
      () => there.close(),
    );
    const { record, token } = await issueToken(here, { tenant: 'acme', role: 'worker' });
    const app = await buildServer({ store: here, adminToken: ADMIN_TOKEN, tokenCacheTtlMs: 50 });
    cleanups.push(() => app.close());
    const scopes = () =>
      app.inject({
        method: 'GET',
        url: '/v1/scopes',
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await scopes()).statusCode).toBe(200);
    expect(await there.deleteToken(record.id)).toBe(true);
    // Within 50 ms the remembered lookup expires; waiting on the answer, not on a timer.
    let status = 200;
    while (status === 200) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await scopes()).statusCode;
    }
    expect(status).toBe(401);
  });
});
