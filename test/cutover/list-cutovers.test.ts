/**
 * GET /v1/cutovers and listCutovers: the tenant's cutovers newest first (ties in start time by
 * cutoverId), paged by an opaque cursor, with how many scopes each covers and has moved, the same
 * through the library and through FencegateClient against a server on the same store. Another
 * tenant's cutovers never show; a cursor this API did not hand out is invalid_request.
 */
import { expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import type { FencegateOpsApi } from '../../src/api.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { CutoverSummary } from '../../src/types.js';
import { codeOf, createWorkflows, openGate, registerPolicies } from './cutover-helpers.js';

async function allPages(api: FencegateOpsApi, limit: number): Promise<CutoverSummary[][]> {
  const pages: CutoverSummary[][] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listCutovers({ limit, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return pages;
}

it('lists newest first with progress, pages by cursor, the same in-process and over HTTP', async () => {
  const { gate, clock, close } = await openGate();
  const app = await buildServer({ store: gate.store });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const token = (await issueToken(gate.store, { tenant: gate.tenant, role: 'operator' })).token;
    const client = new FencegateClient({ url: `http://127.0.0.1:${port}`, token });
    const other = gate.forTenant('another-tenant');
    await registerPolicies(gate);
    await registerPolicies(other);

    expect(await gate.listCutovers()).toEqual({ items: [], nextCursor: null });
    const scopes = await createWorkflows(gate, 6);
    const startedAt = clock.now();
    await gate.cutover({ cutoverId: 'co-a', toPolicy: 'v8', holder: 'c', scopes });
    // Two cutovers at the same store time: the later id comes first.
    clock.advance(1000);
    await gate.cutover({ cutoverId: 'co-b', toPolicy: 'v7', holder: 'c', prefix: 'wf-1' });
    await gate.cutover({ cutoverId: 'co-c', toPolicy: 'v8', holder: 'c', scopes: ['new-1'] });
    clock.advance(1000);
    await gate.cutover({ cutoverId: 'co-d', toPolicy: 'v8', holder: 'c', prefix: 'none-' });
    await other.cutover({ cutoverId: 'co-x', toPolicy: 'v8', holder: 'c', scopes: ['wf-0'] });

    const expected: CutoverSummary[] = [
      {
        cutoverId: 'co-d',
        toPolicy: 'v8',
        holder: 'c',
        scopes: 0,
        moved: 0,
        startedAt: startedAt + 2000,
        finishedAt: startedAt + 2000,
      },
      {
        cutoverId: 'co-c',
        toPolicy: 'v8',
        holder: 'c',
        scopes: 1,
        moved: 1,
        startedAt: startedAt + 1000,
        finishedAt: startedAt + 1000,
      },
      {
        cutoverId: 'co-b',
        toPolicy: 'v7',
        holder: 'c',
        scopes: 1,
        moved: 1,
        startedAt: startedAt + 1000,
        finishedAt: startedAt + 1000,
      },
      {
        cutoverId: 'co-a',
        toPolicy: 'v8',
        holder: 'c',
        scopes: 6,
        moved: 6,
        startedAt,
        finishedAt: startedAt,
      },
    ];
    for (const api of [gate, client]) {
      expect((await api.listCutovers()).items).toEqual(expected);
      expect(await allPages(api, 1)).toEqual(expected.map((item) => [item]));
      expect(await allPages(api, 3)).toEqual([expected.slice(0, 3), expected.slice(3)]);
      expect(await codeOf(api.listCutovers({ cursor: 'not-a-cursor' }))).toBe('invalid_request');
      expect(await codeOf(api.listCutovers({ limit: 0 }))).toBe('invalid_request');
    }
    expect((await other.listCutovers()).items.map((item) => item.cutoverId)).toEqual(['co-x']);

    const raw = await fetch(`http://127.0.0.1:${port}/v1/cutovers?cursor=e30`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'cursor' } },
    });
    await client.close();
  } finally {
    await app.close();
    await close();
  }
});
