/**
 * `--tenant-rate` covers the dashboard too: its pages and panels read the store for the signed-in
 * tenant as the API's routes do, so a tenant past its rate is answered 429 rate_limited there as
 * well, with Retry-After, and another tenant's dashboard is not.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { memoryStore } from '../helpers/memory-store.js';

let app: FastifyInstance;
let acme: string;
let other: string;

beforeAll(async () => {
  const store = memoryStore();
  // One request at once, and the next only five seconds later.
  app = await buildServer({ store, tenantRateLimit: { perSecond: 0.2, burst: 1 } });
  acme = (await issueToken(store, { tenant: 'acme', role: 'operator' })).token;
  other = (await issueToken(store, { tenant: 'other', role: 'operator' })).token;
});
afterAll(async () => {
  await app.close();
});

async function signIn(token: string): Promise<string> {
  const answer = await app.inject({
    method: 'POST',
    url: '/ui/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `token=${token}`,
  });
  expect(answer.statusCode).toBe(303);
  return String(answer.headers['set-cookie']).split(';')[0]!;
}

describe('the dashboard under a tenant rate', () => {
  it("answers a tenant past its rate 429 on its pages and panels, not another tenant's", async () => {
    const cookie = await signIn(acme);
    const api = await app.inject({
      method: 'GET',
      url: '/v1/scopes',
      headers: { authorization: `Bearer ${acme}` },
    });
    expect(api.statusCode).toBe(200);
    for (const url of ['/ui', '/ui/panels/scopes', '/ui/scopes/wf-1']) {
      const page = await app.inject({ method: 'GET', url, headers: { cookie } });
      expect({ url, status: page.statusCode }).toEqual({ url, status: 429 });
      expect(page.headers['retry-after']).toMatch(/^[1-5]$/);
      expect(page.body).toContain('rate_limited');
    }
    const page = await app.inject({
      method: 'GET',
      url: '/ui',
      headers: { cookie: await signIn(other) },
    });
    expect(page.statusCode).toBe(200);
  });
});
