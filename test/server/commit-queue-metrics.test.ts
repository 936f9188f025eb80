/**
 * The group-commit queue on /metrics, on every store with group commit, through a real server:
 * while the store is held (a batch it started cannot finish: held-store.ts) one tenant's storm of
 * concurrent commits shows as writes waiting, one tenant, and that tenant as the deepest; another
 * tenant's commit adds a second tenant one deep; once the store is let go and every commit is
 * answered, the three gauges read 0. Nothing here depends on timing: the storm is larger than
 * what any store's batches in flight take (at most 8 of 64 on etcd), so while the store is held
 * writes are left waiting, and a scrape is asked again until they show. And admission is fair: a
 * commit of another tenant queued behind a storm three times what the held batches take is
 * applied in one of the first batches after the release, not after the storm (the audit log's
 * order says where).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { auditPages } from '../../src/audit/audit-pages.js';
import type { Store } from '../../src/store/store.js';
import type { CommitRequest } from '../../src/types.js';
import { openHeldStore } from '../helpers/held-store.js';
import {
  AREA_STORES,
  storesFor,
  type StoreFactory,
  type TestStoreKind,
} from '../helpers/stores.js';

/** Requests of 64 commits the storm sends at once: 576 commits, past 8 batches of 64. */
const STORM_REQUESTS = 9;
/** The fairness case's storm: 1,536 commits, three times what 8 held batches of 64 take. */
const FAIRNESS_STORM_REQUESTS = 24;

interface QueueGauges {
  waiting: number;
  tenants: number;
  deepestTenant: number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function queueGauges(url: string): Promise<QueueGauges> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string) => {
    const value = new RegExp(`^fencegate_commit_queue_${name} (\\d+)$`, 'm').exec(text)?.[1];
    if (value === undefined) throw new Error(`no fencegate_commit_queue_${name} in /metrics`);
    return Number(value);
  };
  return {
    waiting: gauge('waiting'),
    tenants: gauge('tenants'),
    deepestTenant: gauge('deepest_tenant'),
  };
}

/**
 * Scrapes until `until` holds. Nothing announces that a write has joined the queue, so the scrape
 * is asked again; while the store is held what it waits for can only come, never go.
 */
async function scrapeUntil(
  url: string,
  until: (gauges: QueueGauges) => boolean,
): Promise<QueueGauges> {
  const deadline = Date.now() + 50_000;
  for (;;) {
    const gauges = await queueGauges(url);
    if (until(gauges)) return gauges;
    if (Date.now() > deadline)
      throw new Error(`the queue never showed it: ${JSON.stringify(gauges)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function post(url: string, token: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

function commitsOf(scope: string, fence: number, tag: string, n: number): CommitRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    scope,
    fence,
    operationId: `${tag}-${i}`,
    writes: [{ name: `${tag}-${i}`, expectRevision: 0, value: i }],
  }));
}

/**
 * Where `operationId` of `tenant` was committed in the store's order: the number of `other`'s
 * commits the store applied after it. The audit log's seq is one order across tenants.
 */
async function appliedAfter(
  store: Store,
  tenant: string,
  operationId: string,
  other: string,
): Promise<number> {
  const seqs = async (of: string) => {
    const found: { seq: number; operationId: string | null }[] = [];
    for await (const entries of auditPages(store, of, 0)) {
      for (const entry of entries) if (entry.kind === 'commit') found.push(entry);
    }
    return found;
  };
  const mine = (await seqs(tenant)).find((entry) => entry.operationId === operationId);
  if (mine === undefined) throw new Error(`${operationId} was not committed`);
  return (await seqs(other)).filter((entry) => entry.seq > mine.seq).length;
}

/**
 * A server on a store that can be held, with a worker token of each of two tenants: acme's grant
 * of `storm`, globex's of `calm`.
 */
async function twoTenants(kind: TestStoreKind, stores: StoreFactory) {
  const held = await openHeldStore(kind, stores);
  // Tokens stay cached: a storm's requests never wait for a token read behind the hold.
  const app = await buildServer({ store: held.store, tokenCacheTtlMs: 600_000 });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(async () => {
    await held.release();
    await app.close();
    await held.close();
  });
  const acme = (await issueToken(held.store, { tenant: 'acme', role: 'worker' })).token;
  const globex = (await issueToken(held.store, { tenant: 'globex', role: 'worker' })).token;
  const grantOf = async (token: string, scope: string) =>
    (await (
      await post(url, token, '/v1/leases/acquire', { scope, holder: 'w', ttlMs: 600_000 })
    ).json()) as { scope: string; fence: number };
  const storm = await grantOf(acme, 'storm');
  const calm = await grantOf(globex, 'calm');
  return { held, url, acme, globex, storm, calm };
}

describe.each(AREA_STORES)('the group-commit queue on /metrics, on $name', (kind) => {
  const stores = storesFor(kind, 'queue_metrics');

  it(
    "shows one tenant's storm waiting while the store is held, and 0 once every commit is answered",
    { timeout: 90_000 },
    async () => {
      const { held, url, acme, globex, storm, calm } = await twoTenants(kind, stores);
      expect(await queueGauges(url)).toEqual({ waiting: 0, tenants: 0, deepestTenant: 0 });

      await held.hold();
      const stormAnswers = Array.from({ length: STORM_REQUESTS }, (_, r) =>
        post(url, acme, '/v1/commits', {
          commits: commitsOf(storm.scope, storm.fence, `storm-${r}`, 64),
        }),
      );
      const during = await scrapeUntil(url, (gauges) => gauges.waiting > 0);
      expect(during.tenants).toBe(1);
      expect(during.deepestTenant).toBe(during.waiting);
      // Another tenant's one commit: a second tenant, one deep, beside the storm.
      const calmAnswer = post(
        url,
        globex,
        '/v1/commit',
        commitsOf(calm.scope, calm.fence, 'calm', 1)[0],
      );
      const beside = await scrapeUntil(url, (gauges) => gauges.tenants === 2);
      expect(beside.deepestTenant).toBeGreaterThan(0);
      expect(beside.deepestTenant).toBe(beside.waiting - 1);

      await held.release();
      for (const answer of await Promise.all(stormAnswers)) {
        expect(answer.status).toBe(200);
        const { items } = (await answer.json()) as { items: { status: number }[] };
        expect(items.map((item) => item.status)).toEqual(new Array(64).fill(200));
      }
      expect((await calmAnswer).status).toBe(200);
      // Every commit answered: none can still be waiting.
      expect(await queueGauges(url)).toEqual({ waiting: 0, tenants: 0, deepestTenant: 0 });
    },
  );

  it(
    "admits another tenant's commit ahead of a storm queued before it: the storm does not starve it",
    { timeout: 90_000 },
    async () => {
      const { held, url, acme, globex, storm, calm } = await twoTenants(kind, stores);

      await held.hold();
      // Far more than the batches a held store can have in flight (8 of 64 on etcd), so most of
      // the storm is still queued, ahead of the other tenant's commit, when the store is let go.
      const stormAnswers = Array.from({ length: FAIRNESS_STORM_REQUESTS }, (_, r) =>
        post(url, acme, '/v1/commits', {
          commits: commitsOf(storm.scope, storm.fence, `storm-${r}`, 64),
        }),
      );
      const stormCommits = FAIRNESS_STORM_REQUESTS * 64;
      await scrapeUntil(url, (gauges) => gauges.waiting > 0);
      const calmAnswer = post(
        url,
        globex,
        '/v1/commit',
        commitsOf(calm.scope, calm.fence, 'calm', 1)[0],
      );
      await scrapeUntil(url, (gauges) => gauges.tenants === 2);
      await held.release();
      expect((await calmAnswer).status).toBe(200);
      for (const answer of await Promise.all(stormAnswers)) expect(answer.status).toBe(200);
      // First come, first served would apply the other tenant's commit after the whole storm;
      // admitted turn by turn, it goes in one of the first batches formed after the release.
      const after = await appliedAfter(held.store, 'globex', 'calm-0', 'acme');
      expect(after).toBeGreaterThanOrEqual(stormCommits / 2);
    },
  );
});
