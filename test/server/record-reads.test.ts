/**
 * POST /v1/scopes/:scope/reads: records by name and pages of records in one exchange, each
 * answered exactly as its own GET answers it, in the order asked; refusals name the read at fault.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { namesWithinBudget } from '../../src/core/record-reads.js';
import { RecordReadsSchema } from '../../src/server/routes/record-reads.js';
import { ErrorBody } from '../../src/server/schemas/common.js';
import {
  errorOf,
  expectError,
  expectHistoryValid,
  expectShape,
  serverFixture,
  type ServerFixture,
} from './fixture.js';

const SCOPE = 'lg/thread-1';
const PATH = `/v1/scopes/${encodeURIComponent(SCOPE)}`;

let fx: ServerFixture;
afterEach(async () => {
  try {
    await expectHistoryValid(fx);
  } finally {
    await fx.close();
  }
});

async function withRecords(
  names: string[],
  limits: Partial<typeof DEFAULT_LIMITS> = {},
  valueOf: (n: number) => unknown = (n) => ({ n }),
): Promise<string> {
  fx = await serverFixture({ limits });
  const worker = fx.tokens.workerA;
  const grant = await fx.send('POST', '/v1/leases/acquire', worker, {
    scope: SCOPE,
    holder: 'w',
    ttlMs: 60_000,
  });
  const { fence } = grant.json<{ fence: number }>();
  const commit = await fx.send('POST', '/v1/commit', worker, {
    scope: SCOPE,
    fence,
    operationId: 'seed',
    writes: names.map((name, n) => ({ name, expectRevision: 0, value: valueOf(n) })),
  });
  expect(commit.statusCode).toBe(200);
  return worker;
}

function reads(token: string, body: unknown, path = PATH) {
  return fx.send('POST', `${path}/reads`, token, body);
}

async function get(token: string, query: string): Promise<unknown> {
  const response = await fx.send('GET', `${PATH}/records${query}`, token);
  expect(response.statusCode).toBe(200);
  return response.json<unknown>();
}

describe('POST /v1/scopes/:scope/reads', () => {
  it('answers each record and page as its own GET does, in the order asked', async () => {
    const worker = await withRecords(['cp/a', 'cp/b', 'cp/c', 'wr/b/t1/0', 'wr/b/t1/1', 'bl/x']);
    const response = await reads(worker, {
      records: ['bl/x', 'bl/never', 'cp/a'],
      pages: [
        { prefix: 'cp/', direction: 'desc', limit: 1 },
        { prefix: 'wr/b/' },
        { prefix: 'cp/', limit: 2 },
      ],
    });
    const answer = expectShape(response, 200, RecordReadsSchema) as {
      records: unknown[];
      pages: { items: { name: string }[]; nextCursor: string | null }[];
    };
    expect(answer.records).toEqual([
      await get(worker, '/bl%2Fx'),
      await get(worker, '/bl%2Fnever'),
      await get(worker, '/cp%2Fa'),
    ]);
    expect(answer.pages).toEqual([
      await get(worker, '?prefix=cp%2F&direction=desc&limit=1'),
      await get(worker, '?prefix=wr%2Fb%2F'),
      await get(worker, '?prefix=cp%2F&limit=2'),
    ]);
    expect(answer.pages[0]?.items.map((record) => record.name)).toEqual(['cp/c']);
    expect(answer.pages[1]?.items.map((record) => record.name)).toEqual(['wr/b/t1/0', 'wr/b/t1/1']);
    // A page's cursor reads on through GET like any other page's.
    const rest = await get(
      worker,
      `?prefix=cp%2F&limit=2&cursor=${encodeURIComponent(answer.pages[2]?.nextCursor ?? '')}`,
    );
    expect((rest as { items: { name: string }[] }).items.map((r) => r.name)).toEqual(['cp/c']);
  });

  it('reads a scope never written as empty, and only the caller’s own tenant', async () => {
    const workerA = await withRecords(['cp/a']);
    const never = await reads(
      workerA,
      { records: ['cp/a'], pages: [{ prefix: 'cp/' }] },
      '/v1/scopes/lg%2Fnobody',
    );
    expect(never.json()).toEqual({
      records: [expect.objectContaining({ name: 'cp/a', exists: false, revision: 0 })],
      pages: [{ items: [], nextCursor: null }],
    });
    const otherTenant = await reads(fx.tokens.workerB, {
      records: ['cp/a'],
      pages: [{ prefix: 'cp/' }],
    });
    expect(otherTenant.statusCode).toBe(200);
    expect(otherTenant.json()).toMatchObject({
      records: [{ exists: false }],
      pages: [{ items: [] }],
    });
  });

  it('refuses a request that names no read, too many, or a read that is not valid', async () => {
    const worker = await withRecords(['cp/a']);
    const refused = async (body: unknown, field: string) => {
      const response = await reads(worker, body);
      expectError(response, 'invalid_request');
      expect(errorOf(response).details).toMatchObject({ field });
    };
    await refused({}, 'records');
    await refused({ records: [], pages: [] }, 'records');
    const names = Array.from({ length: namesWithinBudget(DEFAULT_LIMITS) }, (_, n) => `r${n}`);
    const pages = Array.from({ length: DEFAULT_LIMITS.maxReads - names.length }, (_, n) => ({
      prefix: `p${n}/`,
      limit: 1,
    }));
    expect((await reads(worker, { records: names, pages })).statusCode).toBe(200);
    await refused({ records: names, pages: [...pages, { prefix: 'cp/', limit: 1 }] }, 'pages');
    await refused({ records: [...names, 'one-more'] }, 'records');
    await refused({ records: ['cp/a', 'bad name'] }, 'records[1]');
    await refused({ pages: [{ prefix: 'cp/' }, { limit: 0 }] }, 'pages[1].limit');
    await refused({ pages: [{ order: 'revision', after: 'cp/a' }] }, 'pages[0].after');
    await refused({ pages: [{ cursor: 'not-a-cursor' }] }, 'pages[0].cursor');
    const unknownField = await reads(worker, { records: ['cp/a'], names: ['x'] });
    expectError(unknownField, 'invalid_request');
    // As many names as the budget holds of the largest values are accepted: 4 by default.
    expect(names).toHaveLength(4);
    const full = await reads(worker, { records: names });
    expect(full.statusCode).toBe(200);
    expect(full.json<{ records: unknown[] }>().records).toHaveLength(names.length);
  });

  it('counts a request by the records it may read: each name one, each page its limit', async () => {
    const worker = await withRecords(['cp/a']);
    const refused = await reads(worker, {
      records: ['cp/a'],
      pages: [{ prefix: 'cp/', limit: DEFAULT_LIMITS.maxListLimit }],
    });
    expectError(refused, 'invalid_request');
    expect(errorOf(refused).details).toMatchObject({
      field: 'pages',
      max: DEFAULT_LIMITS.maxListLimit,
    });
    // Ten pages without a limit read 100 records each: 1,000, the most one request may read.
    const prefixes = Array.from({ length: 10 }, (_, n) => ({ prefix: `p${n}/` }));
    expect((await reads(worker, { pages: prefixes })).statusCode).toBe(200);
    const eleven = await reads(worker, { pages: [...prefixes, { prefix: 'p10/' }] });
    expectError(eleven, 'invalid_request');
    expect(errorOf(eleven).details).toMatchObject({ field: 'pages' });
  });

  it('refuses a page that reads the same range as an earlier one of the request', async () => {
    const worker = await withRecords(['cp/a', 'cp/b']);
    const refused = async (pages: unknown[], field: string) => {
      const response = await reads(worker, { pages });
      expectError(response, 'invalid_request');
      expect(errorOf(response).details).toMatchObject({ field });
      expect(errorOf(response).message).toContain('pages[0]');
    };
    await refused([{ prefix: 'cp/' }, { prefix: 'cp/', limit: 5 }], 'pages[1]');
    await refused(
      [{ prefix: 'cp/', after: 'cp/a' }, { limit: 1 }, { prefix: 'cp/', after: 'cp/a' }],
      'pages[2]',
    );
    const first = await reads(worker, { pages: [{ prefix: 'cp/', limit: 1 }] });
    const cursor = first.json<{ pages: { nextCursor: string }[] }>().pages[0]?.nextCursor;
    await refused(
      [
        { prefix: 'cp/', cursor },
        { prefix: 'cp/', after: 'cp/a' },
      ],
      'pages[1]',
    );
    // The same prefix in another order or direction is another range.
    const other = await reads(worker, {
      pages: [
        { prefix: 'cp/' },
        { prefix: 'cp/', direction: 'desc' },
        { prefix: 'cp/', order: 'revision' },
      ],
    });
    expect(other.statusCode).toBe(200);
  });

  it('answers within one byte budget: the records named, then each page in order with what is left', async () => {
    // Each value's JSON text is 100 bytes; the budget holds two and a half of them.
    const value = (n: number) => ({ v: `${n}`.padEnd(92, 'x') });
    const names = ['bl/1', 'cp/1', 'cp/2', 'cp/3', 'wr/1', 'wr/2', 'zz/1'];
    const worker = await withRecords(names, { maxPageBytes: 250, maxValueBytes: 100 }, value);
    expect(JSON.stringify(value(0))).toHaveLength(100);
    type Answer = { pages: { items: { name: string }[]; nextCursor: string | null }[] };
    const namesOf = (page: Answer['pages'][number] | undefined) =>
      page?.items.map((record) => record.name);
    const page = async (query: string, cursor: string | null | undefined) =>
      (await get(
        worker,
        `?${query}&cursor=${encodeURIComponent(cursor ?? '')}`,
      )) as Answer['pages'][number];

    const answer = expectShape(
      await reads(worker, {
        records: ['bl/1'],
        pages: [{ prefix: 'cp/' }, { prefix: 'wr/' }, { direction: 'desc' }],
      }),
      200,
      RecordReadsSchema,
    ) as Answer;
    const [cp, wr, desc] = answer.pages;
    expect(namesOf(cp)).toEqual(['cp/1']);
    // Given less than its first record, a page holds that record and no more.
    expect(namesOf(wr)).toEqual(['wr/1']);
    // The budget is spent: a later page reads nothing and says where to start.
    expect(desc?.items).toEqual([]);
    // Each cursor goes on through GET, with the budget of a request of its own.
    expect(namesOf(await page('prefix=cp%2F', cp?.nextCursor))).toEqual(['cp/2', 'cp/3']);
    expect(await page('prefix=wr%2F', wr?.nextCursor)).toMatchObject({
      items: [{ name: 'wr/2' }],
      nextCursor: null,
    });
    expect(namesOf(await page('direction=desc', desc?.nextCursor))).toEqual(['zz/1', 'wr/2']);
  });

  it('needs a token', async () => {
    await withRecords(['cp/a']);
    const response = await fx.send('POST', `${PATH}/reads`, null, { records: ['cp/a'] });
    expectShape(response, 401, ErrorBody);
  });
});
