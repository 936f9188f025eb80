/**
 * Free text (reasons, descriptions, labels, completion errors and provider references) may hold any
 * character but NUL, which PostgreSQL cannot store. Core refuses a NUL with invalid_request naming
 * the field before any store is asked, so the refusals run on the in-memory reference store; that
 * a JSON value may hold NUL is the store's to keep, on every store.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { memoryStore } from '../helpers/memory-store.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const ADMIN = 'admin-token-for-free-text-tests';
const NUL = 'before\u0000after';

interface Case {
  name: string;
  method: 'POST';
  url: string;
  token: 'operator' | 'admin';
  body: Record<string, unknown>;
  field: string;
}

function cases(claimFence: number): Case[] {
  return [
    {
      name: 'takeover reason',
      method: 'POST',
      url: '/v1/scopes/wf-1%2Fmemory/takeover',
      token: 'operator',
      body: { holder: 'ops', reason: NUL },
      field: 'reason',
    },
    {
      name: 'cancel reason',
      method: 'POST',
      url: '/v1/scopes/wf-1%2Fmemory/cancel',
      token: 'operator',
      body: { reason: NUL },
      field: 'reason',
    },
    {
      name: 'policy description',
      method: 'POST',
      url: '/v1/policies',
      token: 'operator',
      body: { version: 'v2', description: NUL },
      field: 'description',
    },
    {
      name: 'policy digest',
      method: 'POST',
      url: '/v1/policies',
      token: 'operator',
      body: { version: 'v3', digest: NUL },
      field: 'digest',
    },
    {
      name: 'cutover reason',
      method: 'POST',
      url: '/v1/cutovers',
      token: 'operator',
      body: { toPolicy: 'v1', holder: 'controller', scopes: ['wf-1/memory'], reason: NUL },
      field: 'reason',
    },
    {
      name: 'token label',
      method: 'POST',
      url: '/v1/admin/tokens',
      token: 'admin',
      body: { tenant: 'acme', role: 'worker', label: NUL },
      field: 'label',
    },
    {
      name: 'completion error',
      method: 'POST',
      url: '/v1/intents/notify-1/complete',
      token: 'operator',
      body: { claimFence, outcome: 'failed', retryable: true, error: NUL },
      field: 'error',
    },
    {
      name: 'completion providerRef',
      method: 'POST',
      url: '/v1/intents/notify-1/complete',
      token: 'operator',
      body: { claimFence, outcome: 'delivered', providerRef: NUL },
      field: 'providerRef',
    },
  ];
}

interface FreeTextServer {
  store: Store;
  operator: string;
  claimFence: number;
  send: (
    method: 'POST' | 'GET',
    url: string,
    token: string,
    body?: unknown,
  ) => Promise<LightMyRequestResponse>;
}

/**
 * A server on the fresh store `open` makes (before the block's tests, closed after them) holding a
 * scope, an intent with NUL in its payload, claimed, and policy v1.
 */
function freeTextServer(open: () => Promise<Store>): FreeTextServer {
  let store: Store;
  let app: FastifyInstance;
  let operator: string;
  let claimFence: number;

  const send = (method: 'POST' | 'GET', url: string, token: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    store = await open();
    app = await buildServer({ store, adminToken: ADMIN });
    operator = (await issueToken(store, { tenant: 'acme', role: 'operator' })).token;
    const grant = (
      await send('POST', '/v1/leases/acquire', operator, {
        scope: 'wf-1/memory',
        holder: 'w1',
        ttlMs: 60_000,
      })
    ).json<{ fence: number }>();
    const committed = await send('POST', '/v1/commit', operator, {
      scope: 'wf-1/memory',
      fence: grant.fence,
      operationId: 'op-1',
      intents: [{ effectKey: 'notify-1', target: 'crm', payload: { text: NUL } }],
    });
    expect(committed.statusCode).toBe(200);
    expect((await send('POST', '/v1/policies', operator, { version: 'v1' })).statusCode).toBe(201);
    const claimed = await send('POST', '/v1/intents/claim', operator, {
      dispatcher: 'd1',
      ttlMs: 60_000,
      limit: 10,
    });
    claimFence = claimed.json<{ items: { claimFence: number }[] }>().items[0]!.claimFence;
  });

  afterAll(async () => {
    await app?.close();
    await store?.close();
  });

  return {
    get store() {
      return store;
    },
    get operator() {
      return operator;
    },
    get claimFence() {
      return claimFence;
    },
    send,
  };
}

describe.each(AREA_STORES)('NUL in JSON on $name', (kind) => {
  const stores = storesFor(kind, 'free_text_json');
  const server = freeTextServer(async () => (await stores.open()).store);

  it('a JSON value may hold NUL: values and payloads are JSON, not free text', async () => {
    const intent = await server.send('GET', '/v1/intents/notify-1', server.operator);
    expect(intent.json<{ payload: unknown }>().payload).toEqual({ text: NUL });
  });
});

describe('NUL in free text', () => {
  const server = freeTextServer(() => Promise.resolve(memoryStore()));

  it.each(cases(0).map((c) => [c.name, c] as const))(
    '%s: invalid_request naming the field, nothing changed',
    async (_name, shape) => {
      const { store, operator, claimFence, send } = server;
      const request = cases(claimFence).find((c) => c.name === shape.name)!;
      const auditBefore = await store.readAudit(undefined, { limit: 1000 });
      const tokensBefore = await store.countTokens();
      const response = await send(
        request.method,
        request.url,
        request.token === 'admin' ? ADMIN : operator,
        request.body,
      );
      expect({ status: response.statusCode, body: response.json<unknown>() }).toMatchObject({
        status: 400,
        body: {
          error: {
            code: 'invalid_request',
            message: expect.stringContaining(request.field) as unknown,
            details: { field: request.field },
          },
        },
      });
      expect(await store.readAudit(undefined, { limit: 1000 })).toEqual(auditBefore);
      expect(await store.countTokens()).toBe(tokensBefore);
      const intent = await send('GET', '/v1/intents/notify-1', operator);
      expect(intent.json<{ status: string; claimFence: number }>()).toMatchObject({
        status: 'claimed',
        claimFence,
      });
    },
  );
});
