/**
 * A scope's page lists its records a page at a time, without their values: a large scope costs a
 * page of names per view, and one record's value is fetched when its page is opened.
 */
import { afterEach, expect, it } from 'vitest';
import { serverFixture, type ServerFixture } from '../server/fixture.js';

let fx: ServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const SCOPE = 'big/scope';
const RECORDS = 60;
const VALUE_CHARS = 50_000;

async function cookieOf(f: ServerFixture): Promise<string> {
  const response = await f.app.inject({
    method: 'POST',
    url: '/ui/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token: f.tokens.operatorA }).toString(),
  });
  return String(response.headers['set-cookie']).split(';')[0] ?? '';
}

it('pages the records of a large scope and shows a value only on its record page', async () => {
  const f = (fx = await serverFixture());
  const grant = await f.send('POST', '/v1/leases/acquire', f.tokens.workerA, {
    scope: SCOPE,
    holder: 'w',
    ttlMs: 600_000,
  });
  const fence = grant.json<{ fence: number }>().fence;
  for (let i = 0; i < RECORDS; i++) {
    const name = `r-${String(i).padStart(3, '0')}`;
    const commit = await f.send('POST', '/v1/commit', f.tokens.workerA, {
      scope: SCOPE,
      fence,
      operationId: `op-${i}`,
      writes: [{ name, expectRevision: 0, value: { text: `${name}:${'v'.repeat(VALUE_CHARS)}` } }],
    });
    expect(commit.json<{ outcome: string }>().outcome).toBe('committed');
  }
  const cookie = await cookieOf(f);
  const scopeUrl = `/ui/scopes/${encodeURIComponent(SCOPE)}`;

  const first = await f.app.inject({ method: 'GET', url: scopeUrl, headers: { cookie } });
  expect(first.statusCode).toBe(200);
  expect(first.body).toContain('r-000');
  expect(first.body).not.toContain('r-059');
  // Values stay out of the listing: the whole page is far smaller than one value.
  expect(first.body).not.toContain('vvvvvvvvvv');
  expect(first.body.length).toBeLessThan(VALUE_CHARS);
  const next = /href="([^"]*cursor=[^"]*)"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&');
  expect(next).toBeDefined();

  const seen = new Set<string>();
  for (let url: string | undefined = scopeUrl, pages = 0; url !== undefined; pages++) {
    expect(pages).toBeLessThan(10);
    const body: string = (await f.app.inject({ method: 'GET', url, headers: { cookie } })).body;
    for (const match of body.matchAll(/>(r-\d{3})</g)) seen.add(match[1]!);
    url = /href="([^"]*cursor=[^"]*)"/.exec(body)?.[1]?.replaceAll('&amp;', '&');
  }
  expect(seen.size).toBe(RECORDS);

  const record = await f.app.inject({
    method: 'GET',
    url: `${scopeUrl}/records/r-007`,
    headers: { cookie },
  });
  expect(record.statusCode).toBe(200);
  expect(record.body).toContain('r-007:vvvv');
  expect(record.body).not.toContain('r-008:');

  const absent = await f.app.inject({
    method: 'GET',
    url: `${scopeUrl}/records/nothing-here`,
    headers: { cookie },
  });
  expect(absent.statusCode).toBe(200);
  expect(absent.body).toContain('never existed');
});
