/**
 * Authentication and roles on every route (taken from the OpenAPI document, so a new route is
 * covered without editing this file), and tenant isolation: the tenant always comes from the token.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueAdminToken } from '../../src/server/tokens.js';
import { ADMIN_TOKEN, errorOf, serverFixture, type ServerFixture } from './fixture.js';

interface DocumentedRoute {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  role: 'public' | 'worker' | 'operator' | 'admin';
}

let fx: ServerFixture;
let routes: DocumentedRoute[];

beforeEach(async () => {
  fx = await serverFixture();
  const openapi = (await fx.send('GET', '/openapi.json', null)).json<{
    paths: Record<string, Record<string, { 'x-fencegate-role': DocumentedRoute['role'] }>>;
  }>();
  routes = Object.entries(openapi.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase() as DocumentedRoute['method'],
      url: path.replace(/\{[A-Za-z]+\}/g, 'x1'),
      role: op['x-fencegate-role'],
    })),
  );
});

afterEach(async () => {
  await fx.close();
});

async function statusOf(
  route: DocumentedRoute,
  token: string | null,
  headers?: Record<string, string>,
) {
  const body = route.method === 'POST' ? {} : undefined;
  const response = await fx.send(route.method, route.url, token, body, headers);
  return {
    route: `${route.method} ${route.url}`,
    status: response.statusCode,
    code: response.statusCode >= 400 ? errorOf(response).code : null,
    message: response.statusCode >= 400 ? errorOf(response).message : null,
  };
}

describe('authentication and roles', () => {
  it('documents a role for every route', () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
    for (const route of routes)
      expect(['public', 'worker', 'operator', 'admin']).toContain(route.role);
    expect(
      routes
        .filter((r) => r.role === 'operator')
        .map((r) => `${r.method} ${r.url}`)
        .sort(),
    ).toEqual(
      [
        'DELETE /v1/scopes/x1',
        'GET /v1/audit',
        'GET /v1/cutovers/x1/report',
        'GET /v1/cutovers',
        'GET /v1/policies',
        'GET /v1/verify',
        'POST /v1/cutovers',
        'GET /v1/rollouts',
        'GET /v1/rollouts/x1',
        'GET /v1/rollouts/x1/report',
        'POST /v1/rollouts',
        'POST /v1/rollouts/x1/advance',
        'POST /v1/rollouts/x1/pause',
        'POST /v1/rollouts/x1/promote',
        'POST /v1/rollouts/x1/resume',
        'POST /v1/rollouts/x1/rollback',
        'POST /v1/policies',
        'POST /v1/scopes/x1/cancel',
        'POST /v1/scopes/x1/takeover',
      ].sort(),
    );
  });

  it('answers 401 unauthorized without a token, with an unknown token and with a malformed header', async () => {
    for (const route of routes.filter((r) => r.role !== 'public')) {
      expect(await statusOf(route, null)).toMatchObject({ status: 401, code: 'unauthorized' });
      const unknown = await statusOf(route, 'fg_unknown');
      expect(unknown).toMatchObject({ status: 401, code: 'unauthorized' });
      expect(unknown.message).toContain("this server's store holds no such token");
      expect(
        await statusOf(route, null, { authorization: `Basic ${fx.tokens.workerA}` }),
      ).toMatchObject({
        status: 401,
        code: 'unauthorized',
      });
    }
  });

  it('answers 403 forbidden to the admin token on tenant endpoints, from the environment or the store', async () => {
    const stored = (await issueAdminToken(fx.store, 'first run')).token;
    for (const route of routes.filter((r) => r.role === 'worker' || r.role === 'operator')) {
      for (const admin of [ADMIN_TOKEN, stored]) {
        expect(await statusOf(route, admin)).toMatchObject({ status: 403, code: 'forbidden' });
      }
    }
    const created = await fx.send('POST', '/v1/admin/tokens', stored, {
      tenant: 'tenant-c',
      role: 'worker',
    });
    expect(created.statusCode).toBe(201);
  });

  it('answers 403 forbidden to tenant tokens on admin endpoints', async () => {
    for (const route of routes.filter((r) => r.role === 'admin')) {
      for (const token of [fx.tokens.workerA, fx.tokens.operatorA]) {
        expect(await statusOf(route, token)).toMatchObject({ status: 403, code: 'forbidden' });
      }
    }
  });

  it('answers 403 forbidden to a worker token on operator endpoints, and lets an operator through', async () => {
    for (const route of routes.filter((r) => r.role === 'operator')) {
      expect(await statusOf(route, fx.tokens.workerA)).toMatchObject({
        status: 403,
        code: 'forbidden',
      });
      expect((await statusOf(route, fx.tokens.operatorA)).status).not.toBe(403);
    }
  });

  it('lets the public endpoints through without a token', async () => {
    for (const route of routes.filter((r) => r.role === 'public')) {
      expect((await fx.send(route.method, route.url, null)).statusCode).toBe(200);
    }
  });

  it('creates tokens that work at once, shows each once, and stops a deleted token at once', async () => {
    const created = await fx.send('POST', '/v1/admin/tokens', ADMIN_TOKEN, {
      tenant: 'tenant-c',
      role: 'worker',
      label: 'ci',
    });
    expect(created.statusCode).toBe(201);
    const token = created.json<{ id: string; token: string; tenant: string; role: string }>();
    expect(Object.keys(token).sort()).toEqual(['id', 'role', 'tenant', 'token']);
    expect(token).toMatchObject({ tenant: 'tenant-c', role: 'worker' });
    expect(token.token).toMatch(/^fg_[A-Za-z0-9_-]{43}$/);
    expect((await fx.send('GET', '/v1/scopes', token.token)).statusCode).toBe(200);

    const deleted = await fx.send('DELETE', `/v1/admin/tokens/${token.id}`, ADMIN_TOKEN);
    expect(deleted.json()).toEqual({ deleted: true });
    expect(errorOf(await fx.send('GET', '/v1/scopes', token.token)).code).toBe('unauthorized');
    expect(errorOf(await fx.send('DELETE', `/v1/admin/tokens/${token.id}`, ADMIN_TOKEN)).code).toBe(
      'not_found',
    );

    for (const bad of [
      { tenant: 'Tenant', role: 'worker' },
      { tenant: '_admin', role: 'operator' },
      { tenant: 'ok', role: 'admin' },
      { tenant: 'ok', role: 'worker', label: 'x'.repeat(257) },
      { tenant: 'ok', role: 'worker', scopes: ['a'] },
    ]) {
      const response = await fx.send('POST', '/v1/admin/tokens', ADMIN_TOKEN, bad);
      expect({ status: response.statusCode, code: errorOf(response).code }).toEqual({
        status: 400,
        code: 'invalid_request',
      });
    }
  });
});

describe('tenant isolation', () => {
  it("never shows or changes another tenant's scopes, records, operations, intents or audit", async () => {
    const a = fx.tokens.operatorA;
    const b = fx.tokens.operatorB;
    const scope = 'shared-name';
    const grant = await fx.send('POST', '/v1/leases/acquire', a, {
      scope,
      holder: 'w1',
      ttlMs: 10_000,
    });
    expect(grant.json()).toMatchObject({ fence: 1 });
    const commit = {
      scope,
      fence: 1,
      operationId: 'op-1',
      writes: [{ name: 'doc', expectRevision: 0, value: 'tenant a' }],
      intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
    };
    expect((await fx.send('POST', '/v1/commit', a, commit)).statusCode).toBe(200);

    expect(errorOf(await fx.send('GET', `/v1/scopes/${scope}`, b)).code).toBe('scope_not_found');
    expect((await fx.send('GET', '/v1/scopes', b)).json()).toEqual({ items: [], nextCursor: null });
    expect((await fx.send('GET', `/v1/scopes/${scope}/records/doc`, b)).json()).toMatchObject({
      exists: false,
      revision: 0,
    });
    expect((await fx.send('GET', `/v1/scopes/${scope}/records`, b)).json()).toEqual({ items: [] });
    expect(errorOf(await fx.send('GET', '/v1/operations/op-1', b)).code).toBe('not_found');
    expect(errorOf(await fx.send('GET', '/v1/intents/fx-1', b)).code).toBe('not_found');
    expect((await fx.send('GET', '/v1/intents', b)).json()).toEqual({
      items: [],
      nextCursor: null,
    });
    expect((await fx.send('GET', '/v1/audit', b)).json()).toEqual({
      items: [],
      nextAfterSeq: null,
    });

    // Tenant B's fence, commit, takeover and delete act on its own namespace only.
    const rejected = await fx.send('POST', '/v1/commit', b, { ...commit, operationId: 'op-b' });
    expect(rejected.json()).toMatchObject({
      outcome: 'rejected',
      error: { code: 'scope_not_found' },
    });
    expect(
      (await fx.send('POST', `/v1/scopes/${scope}/takeover`, b, { holder: 'b' })).json(),
    ).toMatchObject({
      fence: 1,
    });
    expect((await fx.send('DELETE', `/v1/scopes/${scope}`, b)).statusCode).toBe(200);

    expect((await fx.send('GET', `/v1/scopes/${scope}`, a)).json()).toMatchObject({
      fence: 1,
      holder: 'w1',
      status: 'active',
    });
    expect((await fx.send('GET', `/v1/scopes/${scope}/records/doc`, a)).json()).toMatchObject({
      value: 'tenant a',
      revision: 1,
    });
    const auditA = (await fx.send('GET', '/v1/audit', a)).json<{ items: { tenant: string }[] }>();
    expect(new Set(auditA.items.map((entry) => entry.tenant))).toEqual(new Set(['tenant-a']));
  });
});
