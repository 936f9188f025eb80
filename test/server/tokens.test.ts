/**
 * Token management on every store: the first-run bootstrap is atomic (two servers starting at once
 * on an empty store never both create first-run tokens), `GET /v1/admin/tokens` lists tokens
 * without their secrets, and a deleted token stops working with the next request. Who may list
 * and what a tenant filter may be are the server's rules, checked on the in-memory reference
 * store.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/server/build-server.js';
import { createFirstRunTokens } from '../../src/server/start-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { AREA_STORES, storesFor, type StoreFactory } from '../helpers/stores.js';

const ADMIN = 'admin-token-for-token-tests';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openStore(stores: StoreFactory): Promise<{ store: Store; url: string }> {
  const opened = await stores.open();
  cleanups.push(() => opened.store.close());
  return opened;
}

async function server(store: Store): Promise<FastifyInstance> {
  const app = await buildServer({ store, adminToken: ADMIN });
  cleanups.push(() => app.close());
  return app;
}

const get = (app: FastifyInstance, url: string, token: string) =>
  app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

describe.each(AREA_STORES)('tokens on $name', (kind) => {
  const stores = storesFor(kind, 'tokens');

  it('two handles bootstrapping an empty store at once: exactly one creates first-run tokens', async () => {
    const { store, url } = await openStore(stores);
    const handles = [store];
    for (let i = 0; i < 3; i++) {
      const other = await stores.reopen(url);
      cleanups.push(() => other.close());
      handles.push(other);
    }
    const results = await Promise.all(handles.map((handle) => createFirstRunTokens(handle)));
    const created = results.filter((result) => result !== null);
    expect(created).toHaveLength(1);
    expect(await store.countTokens()).toBe(2);
    const listed = await store.listTokens();
    expect(listed.map((token) => token.id).sort()).toEqual(
      [created[0]!.adminTokenId, created[0]!.operatorTokenId].sort(),
    );
    // A later start finds the tokens and creates none.
    expect(await createFirstRunTokens(store)).toBeNull();
  });

  it('GET /v1/admin/tokens lists id, tenant, role, label and createdAt, never a secret', async () => {
    const { store } = await openStore(stores);
    const app = await server(store);
    const worker = await issueToken(store, { tenant: 'acme', role: 'worker', label: 'ci' });
    const operator = await issueToken(store, { tenant: 'globex', role: 'operator' });
    const first = await createFirstRunTokens(store);
    expect(first).toBeNull();

    const all = await get(app, '/v1/admin/tokens', ADMIN);
    expect(all.statusCode).toBe(200);
    const items = all.json<{ items: Record<string, unknown>[] }>().items;
    expect(items).toHaveLength(2);
    expect(items).toContainEqual({
      id: worker.record.id,
      tenant: 'acme',
      role: 'worker',
      label: 'ci',
      createdAt: worker.record.createdAt,
    });
    expect(items).toContainEqual({
      id: operator.record.id,
      tenant: 'globex',
      role: 'operator',
      label: null,
      createdAt: operator.record.createdAt,
    });
    expect(all.body).not.toContain(worker.token);
    expect(all.body).not.toContain(worker.record.hash);

    const acme = await get(app, '/v1/admin/tokens?tenant=acme', ADMIN);
    expect(acme.json<{ items: { id: string }[] }>().items.map((t) => t.id)).toEqual([
      worker.record.id,
    ]);
  });

  it('first-run admin tokens are listed as admin and can be revoked by id', async () => {
    const { store } = await openStore(stores);
    const app = await server(store);
    const first = await createFirstRunTokens(store);
    expect(first).not.toBeNull();
    const items = (await get(app, '/v1/admin/tokens', first!.adminToken)).json<{
      items: { id: string; tenant: string; role: string }[];
    }>().items;
    expect(items).toContainEqual(
      expect.objectContaining({ id: first!.adminTokenId, role: 'admin' }),
    );
    expect(items).toContainEqual(
      expect.objectContaining({ id: first!.operatorTokenId, tenant: 'dev', role: 'operator' }),
    );
  });

  it('a deleted token is refused on the very next request', async () => {
    const { store } = await openStore(stores);
    const app = await server(store);
    const worker = await issueToken(store, { tenant: 'acme', role: 'worker' });
    expect((await get(app, '/v1/scopes', worker.token)).statusCode).toBe(200);
    const deleted = await app.inject({
      method: 'DELETE',
      url: `/v1/admin/tokens/${worker.record.id}`,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(deleted.statusCode).toBe(200);
    expect((await get(app, '/v1/scopes', worker.token)).statusCode).toBe(401);
    expect(await store.listTokens()).toEqual([]);
  });
});

describe('token listing rules', () => {
  it('GET /v1/admin/tokens refuses a malformed tenant filter with invalid_request and an operator token with 403', async () => {
    const store = memoryStore();
    cleanups.push(() => store.close());
    const app = await server(store);
    const operator = await issueToken(store, { tenant: 'globex', role: 'operator' });
    const bad = await get(app, '/v1/admin/tokens?tenant=Not%20A%20Tenant', ADMIN);
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { code: string } }>().error.code).toBe('invalid_request');
    expect((await get(app, '/v1/admin/tokens', operator.token)).statusCode).toBe(403);
  });
});
