/**
 * `fencegate serve --tenant-rate`: over real HTTP, a tenant past its rate is answered 429
 * rate_limited with Retry-After before any store work, another tenant is not, the refusals are
 * counted in /metrics, and the TypeScript client waits and sends the same commit again rather than
 * failing or abandoning it. One server for the file. A token comes back every 250 ms: slow enough
 * that three requests sent at once, or a request right after a batch, still find the bucket empty
 * on a loaded machine (at 50 ms they did not), fast enough that the clients' waits stay short.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/client.js';
import { issueToken } from '../../src/server/tokens.js';
import { TENANT, startHarness, type OpsHarness } from '../client/harness.js';

const RATE = { perSecond: 4, burst: 2 };
let h: OpsHarness;
let otherToken: string;

beforeAll(async () => {
  h = await startHarness({ tenantRateLimit: RATE });
  otherToken = (await issueToken(h.store, { tenant: 'other', role: 'worker' })).token;
});
afterAll(async () => {
  await h.close();
});

function post(token: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Waits until the bucket of `token`'s tenant is full again (answers carry how long). */
async function refill(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, (1000 * RATE.burst) / RATE.perSecond + 20));
}

describe('per-tenant rate limit', () => {
  it("answers a tenant past its burst 429 rate_limited with Retry-After, and not another tenant's request", async () => {
    await refill();
    const scope = (n: number) => ({ scope: `rl/${n}`, holder: 'w', ttlMs: 60_000 });
    const first = await Promise.all(
      [0, 1, 2].map((n) => post(h.workerToken, '/v1/leases/acquire', scope(n))),
    );
    const statuses = first.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
    const refused = first.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await refused.json()) as {
      error: { code: string; message: string; details: { retryAfterMs: number } };
    };
    expect(body.error.code).toBe('rate_limited');
    expect(body.error.message).toContain('nothing was changed');
    expect(body.error.details.retryAfterMs).toBeGreaterThan(0);
    expect(body.error.details.retryAfterMs).toBeLessThanOrEqual(1000 / RATE.perSecond + 1);
    // Nothing was changed: exactly two of the three scopes exist.
    const held = await Promise.all([0, 1, 2].map((n) => h.store.getScope(TENANT, `rl/${n}`)));
    expect(held.filter((s) => s !== null)).toHaveLength(2);
    // Another tenant has its own bucket.
    const other = await post(otherToken, '/v1/leases/acquire', scope(9));
    expect(other.status).toBe(200);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/fencegate_rate_limited_total\{route="\/v1\/leases\/acquire"\} [1-9]/);
    expect(metrics).toContain('fencegate_commit_queue_deepest_tenant');
    expect(metrics).not.toContain(TENANT);
  });

  it('a batch of commits costs one per commit', async () => {
    await refill();
    const grant = (await (
      await post(h.workerToken, '/v1/leases/acquire', {
        scope: 'rl/batch',
        holder: 'w',
        ttlMs: 60_000,
      })
    ).json()) as { fence: number };
    await refill();
    const commits = [0, 1, 2].map((n) => ({
      scope: 'rl/batch',
      fence: grant.fence,
      operationId: `rl-b-${n}`,
      writes: [{ name: `r${n}`, expectRevision: 0, value: n }],
    }));
    const answer = await post(h.workerToken, '/v1/commits', { commits });
    // Larger than the burst: admitted once the bucket is full, leaving it owing.
    expect(answer.status).toBe(200);
    const next = await post(h.workerToken, '/v1/commits', { commits: commits.slice(0, 1) });
    expect(next.status).toBe(429);
  });

  it('the TypeScript client waits past 429s and commits every time, coalesced or alone', async () => {
    await refill();
    const worker = new FencegateClient({
      url: h.url,
      token: h.workerToken,
      coalesceCommits: false,
    });
    const grants: Awaited<ReturnType<typeof worker.acquire>>[] = [];
    for (let n = 0; n < 4; n++)
      grants.push(await worker.acquire({ scope: `rl/c${n}`, holder: 'w', ttlMs: 60_000 }));
    const results = await Promise.all(
      grants.map((g, n) =>
        worker.commit({
          scope: g.scope,
          fence: g.fence,
          operationId: `rl-c-${n}`,
          writes: [{ name: 'doc', expectRevision: 0, value: n }],
        }),
      ),
    );
    expect(results.map((r) => r.outcome)).toEqual([
      'committed',
      'committed',
      'committed',
      'committed',
    ]);
    const coalescing = new FencegateClient({ url: h.url, token: h.workerToken });
    const many = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((n) =>
        coalescing.commit({
          scope: grants[n % 4]!.scope,
          fence: grants[n % 4]!.fence,
          operationId: `rl-m-${n}`,
          writes: [{ name: `m${n}`, expectRevision: 0, value: n }],
        }),
      ),
    );
    expect(many.every((r) => r.outcome === 'committed')).toBe(true);
  });

  it('past its wait budget the client fails rate_limited and the commit is not abandoned', async () => {
    await refill();
    const impatient = new FencegateClient({
      url: h.url,
      token: h.workerToken,
      coalesceCommits: false,
      rateLimitWaitMs: 0,
    });
    const patient = new FencegateClient({
      url: h.url,
      token: h.workerToken,
      coalesceCommits: false,
    });
    const grant = await patient.acquire({ scope: 'rl/budget', holder: 'w', ttlMs: 60_000 });
    await refill();
    const request = (n: number) => ({
      scope: grant.scope,
      fence: grant.fence,
      operationId: `rl-budget-${n}`,
      writes: [{ name: `b${n}`, expectRevision: 0, value: n }],
    });
    const settled = await Promise.allSettled([0, 1, 2, 3].map((n) => impatient.commit(request(n))));
    const refused = settled.filter((s) => s.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const failure of refused) expect(failure.reason).toMatchObject({ code: 'rate_limited' });
    // Not abandoned: each refused commit is absent, and sent again later it commits.
    await refill();
    for (const [n, s] of settled.entries()) {
      if (s.status === 'fulfilled') continue;
      expect(await patient.getOperation(`rl-budget-${n}`)).toBeNull();
      expect((await patient.commit(request(n))).outcome).toBe('committed');
    }
  });
});
