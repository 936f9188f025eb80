/**
 * POST /v1/scopes/:scope/reads: records by name and pages of records in one exchange, each
 * answered exactly as its own GET answers it, in the order asked; refusals name the read at fault.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
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

async function withRecords(names: string[]): Promise<string> {
  fx = await serverFixture();
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
    writes: names.map((name, n) => ({ name, expectRevision: 0, value: { n } })),
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
    const names = Array.from({ length: DEFAULT_LIMITS.maxReads }, (_, n) => `r${n}`);
    await refused({ records: names, pages: [{ prefix: 'cp/' }] }, 'pages');
    await refused({ records: ['cp/a', 'bad name'] }, 'records[1]');
    await refused({ pages: [{ prefix: 'cp/' }, { limit: 0 }] }, 'pages[1].limit');
    await refused({ pages: [{ order: 'revision', after: 'cp/a' }] }, 'pages[0].after');
    await refused({ pages: [{ cursor: 'not-a-cursor' }] }, 'pages[0].cursor');
    const unknownField = await reads(worker, { records: ['cp/a'], names: ['x'] });
    expectError(unknownField, 'invalid_request');
    // The full count is accepted.
    const full = await reads(worker, { records: names });
    expect(full.statusCode).toBe(200);
    expect(full.json<{ records: unknown[] }>().records).toHaveLength(DEFAULT_LIMITS.maxReads);
  });

  it('needs a token', async () => {
    await withRecords(['cp/a']);
    const response = await fx.send('POST', `${PATH}/reads`, null, { records: ['cp/a'] });
    expectShape(response, 401, ErrorBody);
  });
});
