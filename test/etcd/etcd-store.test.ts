/**
 * What only the etcd store does: a Txn sent again after a lost answer applies once, requests that
 * cannot fit in one Txn are invalid_request with nothing changed (commits by the limits derived
 * from the store's capabilities, naming the limit), and group commit batches
 * operations on distinct scopes while each caller gets its own answer. A scope value written
 * before grants recorded their token (no `grantTokenId` in its JSON) binds no token.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { CANCEL_INTENTS_PAGE } from '../../src/core/cancel-intents-page.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { admits } from '../../src/core/rollout-rules.js';
import { planClaim } from '../../src/core/plan/plan-intents.js';
import { planAcquire } from '../../src/core/plan/plan-leases.js';
import { systemClock } from '../../src/core/clock.js';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { EtcdConnection } from '../../src/store/etcd/etcd-connection.js';
import { DEFAULT_ETCD_LIMITS, EtcdEngine } from '../../src/store/etcd/etcd-engine.js';
import { readAuditPage } from '../../src/store/etcd/etcd-audit.js';
import { listRecordsPage } from '../../src/store/etcd/etcd-record-page.js';
import { EtcdKeys } from '../../src/store/etcd/etcd-keys.js';
import { EtcdCall } from '../../src/store/etcd/etcd-snapshot.js';
import { KeyCache } from '../../src/store/optimistic/key-cache.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { parseEtcdUrl } from '../../src/store/etcd/etcd-url.js';
import type { ListRecordsQuery } from '../../src/types.js';
import { etcdTestUrl, skipWithoutEtcd } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

const prefix = `store-${randomUUID().slice(0, 8)}`;
let gate: Fencegate;

beforeAll(async () => {
  const store = await EtcdStore.open({
    url: `${etcdTestUrl('single')}?prefix=${prefix}`,
    groupCommit: true,
  });
  gate = await Fencegate.open({ store });
});

afterAll(async () => {
  const result = await verifyStore(gate.store);
  expect(result.violations).toEqual([]);
  await gate.close();
});

describe.skipIf(noEtcd)('the etcd store', () => {
  it('a Txn sent again after its answer was lost applies once and is recognised as applied', async () => {
    const target = parseEtcdUrl(`${etcdTestUrl('single')}?prefix=${prefix}-resend`);
    const connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: 2_000,
      operationTimeoutMs: 5_000,
    });
    const engine = new EtcdEngine(
      connection,
      new EtcdKeys(target.prefix),
      new KeyCache(),
      systemClock,
      DEFAULT_ETCD_LIMITS,
    );
    try {
      const call = new EtcdCall();
      const planned = await engine.plan(
        'acme',
        call,
        (s) => planAcquire(s, { scope: 'once', holder: 'w', ttlMs: 60_000 }),
        {},
      );
      const built = engine.build([planned], call);
      const first = await connection.writeTxn(built.request);
      const second = await connection.writeTxn(built.request);
      if (!first.ok || !second.ok) throw new Error('etcd did not answer');
      expect(first.response.succeeded).toBe(true);
      expect(second.response.succeeded).toBe(false);
      expect(engine.alreadyApplied(built, second.response)).toBe(true);
      // And the store answers a retried acquire with the same grant, fence 1 still.
      const store = await EtcdStore.open({
        url: `${etcdTestUrl('single')}?prefix=${target.prefix}`,
      });
      const again = await store.acquire('acme', { scope: 'once', holder: 'w', ttlMs: 60_000 });
      expect(again).toMatchObject({ fence: 1, reacquired: true });
      await store.close();
    } finally {
      connection.close();
    }
  });

  it('a scope value written before grants recorded their token binds none: any worker token releases it', async () => {
    const target = parseEtcdUrl(`${etcdTestUrl('single')}?prefix=${prefix}-unbound`);
    const url = `${etcdTestUrl('single')}?prefix=${target.prefix}`;
    const owner = { tokenId: 'tok_owner', role: 'worker' as const, mayTakeOver: [] };
    const other = { ...owner, tokenId: 'tok_other' };
    const first = await EtcdStore.open({ url });
    const grant = await first.acquire('acme', { scope: 'old', holder: 'w', ttlMs: 60_000 }, owner);
    await first.close();
    const connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: 2_000,
      operationTimeoutMs: 5_000,
    });
    try {
      const key = Buffer.from(
        new EtcdKeys(target.prefix).ref('acme', { type: 'scope', scope: 'old' }),
      );
      const [stored] = (await connection.range({ key })).kvs;
      const { grantTokenId, ...before } = JSON.parse(stored!.value.toString()) as Record<
        string,
        unknown
      >;
      expect(grantTokenId).toBe('tok_owner');
      const value = Buffer.from(JSON.stringify(before));
      const written = await connection.writeTxn({ success: [{ request_put: { key, value } }] });
      expect(written.ok).toBe(true);
    } finally {
      connection.close();
    }
    const store = await EtcdStore.open({ url });
    const release = { scope: 'old', holder: 'w', fence: grant.fence };
    await expect(store.release('acme', release, other)).resolves.toMatchObject({ released: true });
    await store.close();
  });

  it('a delete that cannot fit in one Txn is invalid_request and changes nothing', async () => {
    const grant = await gate.acquire({ scope: 'big', holder: 'w', ttlMs: 60_000 });
    for (let start = 0; start < 70; start += 35) {
      const result = await gate.commit({
        scope: 'big',
        fence: grant.fence,
        operationId: `fill-${start}`,
        writes: Array.from({ length: 35 }, (_, i) => ({
          name: `r${start + i}`,
          expectRevision: 0,
          value: i,
        })),
      });
      expect(result.outcome).toBe('committed');
    }
    const error = await gate.deleteScope('big', {}).catch((caught: unknown) => caught);
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
    expect(isFencegateError(error) && error.message).toMatch(/--max-txn-ops/);
    expect(await gate.getScope('big')).toMatchObject({ status: 'active', fence: grant.fence });
    expect((await gate.getRecord('big', 'r0')).exists).toBe(true);
  });

  it('cancelIntents on a scope with more intents than one Txn compares cancels them page by page, each page one Txn', async () => {
    const first = await gate.acquire({ scope: 'many-intents', holder: 'run-1', ttlMs: 60_000 });
    for (let batch = 0; batch < 9; batch += 1) {
      const result = await gate.commit({
        scope: 'many-intents',
        fence: first.fence,
        operationId: `many-intents-${batch}`,
        intents: Array.from({ length: 16 }, (_, i) => ({
          effectKey: `many-${batch}-${String(i).padStart(2, '0')}`,
          target: 'notify',
          payload: {},
        })),
      });
      expect(result.outcome).toBe('committed');
    }
    const current = await gate.takeover('many-intents', { holder: 'run-2', ttlMs: 60_000 });
    const request = {
      scope: 'many-intents',
      holder: 'run-2',
      fence: current.fence,
      committedFrom: first.fence,
    };
    const firstPage = await gate.cancelIntents(request);
    expect(firstPage.cancelled).toHaveLength(CANCEL_INTENTS_PAGE);
    expect(firstPage.nextCursor).not.toBeNull();
    const rest = await gate.cancelAllIntents({ ...request, cursor: firstPage.nextCursor! });
    const cancelled = [...firstPage.cancelled, ...rest];
    expect(cancelled).toHaveLength(144);
    expect(new Set(cancelled).size).toBe(144);
    expect((await gate.getIntent('many-0-00'))?.status).toBe('cancelled');
    expect((await gate.getIntent('many-8-15'))?.status).toBe('cancelled');
    expect(await gate.getScope('many-intents')).toMatchObject({
      fence: current.fence,
      holder: 'run-2',
    });
  });

  it('cancelIntents on etcd with a small --max-txn-ops cuts its pages to what one Txn holds', async () => {
    const store = await EtcdStore.open({
      url: `${etcdTestUrl('single')}?prefix=${prefix}-small-cancel`,
      limits: { maxTxnOps: 16 },
    });
    const small = await Fencegate.open({ store });
    try {
      const first = await small.acquire({ scope: 'pages', holder: 'run-1', ttlMs: 60_000 });
      for (let batch = 0; batch < 5; batch += 1) {
        const result = await small.commit({
          scope: 'pages',
          fence: first.fence,
          operationId: `pages-${batch}`,
          intents: Array.from({ length: 4 }, (_, i) => ({
            effectKey: `page-${batch}-${i}`,
            target: 'notify',
            payload: {},
          })),
        });
        expect(result.outcome).toBe('committed');
      }
      const current = await small.takeover('pages', { holder: 'run-2', ttlMs: 60_000 });
      const request = {
        scope: 'pages',
        holder: 'run-2',
        fence: current.fence,
        committedFrom: first.fence,
      };
      // Two keys per cancelled intent and the audit key: 7 intents fill a Txn of 16.
      const firstPage = await small.cancelIntents(request);
      expect(firstPage.cancelled).toHaveLength(7);
      const rest = await small.cancelAllIntents({ ...request, cursor: firstPage.nextCursor! });
      expect([...firstPage.cancelled, ...rest]).toHaveLength(20);
    } finally {
      await small.close();
    }
  });

  it("an operator's cancel of a scope with 130 pending intents, more than one Txn holds, answers once all are cancelled, each page one Txn", async () => {
    const tenant = gate.forTenant('stop-many');
    const grant = await tenant.acquire({ scope: 'stop-many', holder: 'run-1', ttlMs: 60_000 });
    await commitIntents(tenant, 'stop-many', grant.fence, 'stop', 130);
    const result = await tenant.cancel('stop-many', { reason: 'runaway' });
    expect(result).toEqual({ fence: grant.fence + 1, cancelledIntents: 130 });
    // An entry's seq is its Txn's revision × 1024 and its place in it: the fence step and the
    // first page are one Txn, and the other pages two more.
    const entries = (await tenant.audit({ limit: 1000 })).items.filter(
      (entry) => entry.kind === 'cancel' || entry.outcome === 'cancelled',
    );
    const txns = [...new Set(entries.map((entry) => Math.floor(entry.seq / 1024)))];
    expect(txns).toHaveLength(Math.ceil(130 / CANCEL_INTENTS_PAGE));
    expect(entries.filter((entry) => Math.floor(entry.seq / 1024) === txns[0])).toHaveLength(
      1 + CANCEL_INTENTS_PAGE,
    );
    expect((await tenant.getIntent('stop-0-00'))?.status).toBe('cancelled');
    expect((await tenant.getIntent('stop-9-09'))?.status).toBe('cancelled');
    const pending = await tenant.listIntents({ scope: 'stop-many', status: 'pending' });
    expect(pending.items).toEqual([]);
  });

  it('a rollout rollback with cancelIntents over a scope with 130 pending toPolicy intents cancels them all, and its report counts each', async () => {
    const tenant = gate.forTenant('rollback-many');
    await tenant.registerPolicy({ version: 'v7' });
    await tenant.registerPolicy({ version: 'v8' });
    await tenant.rollouts.start({
      rolloutId: 'r-many',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      scopes: ['wf-many', 'wf-few', ...rampedOut('r-many', ['wf-many', 'wf-few'])],
      steps: [50, 100],
    });
    const many = await tenant.acquire({
      scope: 'wf-many',
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
    await commitIntents(tenant, 'wf-many', many.fence, 'many', 130);
    const few = await tenant.acquire({
      scope: 'wf-few',
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
    await commitIntents(tenant, 'wf-few', few.fence, 'few', 3);
    const rollout = await tenant.rollouts.rollback({ rolloutId: 'r-many', cancelIntents: true });
    expect(rollout.status).toBe('rolled_back');
    expect((await tenant.getIntent('many-0-00'))?.status).toBe('cancelled');
    expect((await tenant.getIntent('many-9-09'))?.status).toBe('cancelled');
    expect((await tenant.getIntent('few-0-02'))?.status).toBe('cancelled');
    expect((await tenant.rollouts.report('r-many'))?.rollback?.intentsCancelled).toBe(133);
  });

  it('on etcd with a small --max-txn-ops, a cancel and a rollback with cancelIntents cut their pages to what one Txn holds', async () => {
    const store = await EtcdStore.open({
      url: `${etcdTestUrl('single')}?prefix=${prefix}-small-rollback`,
      limits: { maxTxnOps: 16 },
    });
    const small = await Fencegate.open({ store });
    try {
      await small.registerPolicy({ version: 'v7' });
      await small.registerPolicy({ version: 'v8' });
      const scopes = ['wf-a', 'wf-c', 'wf-d', 'wf-2'];
      await small.rollouts.start({
        rolloutId: 'r-small',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        scopes: [...scopes, ...rampedOut('r-small', scopes)],
        steps: [50, 100],
      });
      for (const scope of scopes) {
        const grant = await small.acquire({
          scope,
          holder: 'v8',
          ttlMs: 60_000,
          policyVersion: 'v8',
        });
        for (const batch of [0, 1, 2]) {
          const result = await small.commit({
            scope,
            fence: grant.fence,
            operationId: `${scope}-${batch}`,
            intents: Array.from({ length: 3 }, (_, i) => ({
              effectKey: `${scope}-${batch}-${i}`,
              target: 'notify',
              payload: {},
            })),
          });
          expect(result.outcome).toBe('committed');
        }
      }
      const rollout = await small.rollouts.rollback({ rolloutId: 'r-small', cancelIntents: true });
      expect(rollout.status).toBe('rolled_back');
      expect((await small.rollouts.report('r-small'))?.rollback?.intentsCancelled).toBe(36);
      // And an operator's cancel of a scope with more intents than a Txn of 16 cancels.
      const grant = await small.acquire({
        scope: 'wf-a',
        holder: 'v7',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      for (const batch of [0, 1, 2, 3]) {
        const result = await small.commit({
          scope: 'wf-a',
          fence: grant.fence,
          operationId: `again-${batch}`,
          intents: Array.from({ length: 3 }, (_, i) => ({
            effectKey: `again-${batch}-${i}`,
            target: 'notify',
            payload: {},
          })),
        });
        expect(result.outcome).toBe('committed');
      }
      expect(await small.cancel('wf-a')).toEqual({ fence: grant.fence + 1, cancelledIntents: 12 });
    } finally {
      await small.close();
    }
  });

  it('capabilities: etcd bounds a transaction', () => {
    expect(gate.store.capabilities).toMatchObject({
      transaction: { maxOps: 128, keysPerIntent: 3 },
    });
  });

  it('a commit with more writes than one Txn holds is invalid_request naming the limit, and changes nothing', async () => {
    const store = await EtcdStore.open({
      url: `${etcdTestUrl('single')}?prefix=${prefix}-small`,
      limits: { maxTxnOps: 16 },
    });
    const small = await Fencegate.open({ store });
    try {
      const grant = await small.acquire({ scope: 'wide', holder: 'w', ttlMs: 60_000 });
      const auditBefore = (await small.audit({ limit: 1000 })).items.length;
      const commit = (count: number, operationId: string) =>
        small.commit({
          scope: 'wide',
          fence: grant.fence,
          operationId,
          writes: Array.from({ length: count }, (_, i) => ({
            name: `r${i}`,
            expectRevision: 0,
            value: i,
          })),
        });
      const error = await commit(20, 'too-wide').catch((caught: unknown) => caught);
      expect(isFencegateError(error) && error.code).toBe('invalid_request');
      expect(isFencegateError(error) && error.message).toMatch(/maxTransactionOps/);
      expect(isFencegateError(error) && error.details).toMatchObject({
        limit: 'maxTransactionOps',
        max: 16,
      });
      // Nothing stored: no outcome, no record, no audit entry.
      expect(await small.getOperation('too-wide')).toBeNull();
      expect((await small.getRecord('wide', 'r0')).exists).toBe(false);
      expect((await small.audit({ limit: 1000 })).items).toHaveLength(auditBefore);
      // What fits is accepted.
      expect((await commit(10, 'fits')).outcome).toBe('committed');
    } finally {
      await small.close();
    }
  });

  it('the limit counts the fence grant a stale fence makes the Txn compare: refused by name, never by etcd', async () => {
    const first = await gate.acquire({ scope: 'edge', holder: 'a', ttlMs: 60_000 });
    await gate.takeover('edge', { holder: 'b', ttlMs: 60_000, reason: 'test' });
    // 64 writes and `reads` reads of other records of the scope.
    const commitWith = (reads: number, operationId: string) =>
      gate.commit({
        scope: 'edge',
        fence: first.fence,
        operationId,
        reads: Array.from({ length: reads }, (_, i) => ({
          scope: 'edge',
          name: `read${i}`,
          revision: 0,
        })),
        writes: Array.from({ length: 64 }, (_, i) => ({
          name: `e${i}`,
          expectRevision: 0,
          value: i,
        })),
      });
    // 125 records: with the scope, the outcome, the audit key and the fence grant, 129 compares.
    const error = await commitWith(61, 'edge-wide').catch((caught: unknown) => caught);
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
    expect(isFencegateError(error) && error.details).toMatchObject({
      limit: 'maxTransactionOps',
      max: 128,
    });
    expect(await gate.getOperation('edge-wide')).toBeNull();
    // One record fewer fits, and the stale fence is refused as such.
    const refused = await commitWith(60, 'edge-fits');
    expect(refused.outcome === 'rejected' && refused.error.code).toBe('stale_fence');
  });

  it('a commit whose values do not fit in one request is invalid_request naming the limit', async () => {
    const grant = await gate.acquire({ scope: 'heavy', holder: 'w', ttlMs: 60_000 });
    const value = 'x'.repeat(200 * 1024);
    const error = await gate
      .commit({
        scope: 'heavy',
        fence: grant.fence,
        operationId: 'too-heavy',
        writes: Array.from({ length: 10 }, (_, i) => ({ name: `v${i}`, expectRevision: 0, value })),
      })
      .catch((caught: unknown) => caught);
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
    expect(isFencegateError(error) && error.details).toMatchObject({
      limit: 'maxTransactionBytes',
    });
    expect(await gate.getOperation('too-heavy')).toBeNull();
  });

  it('an audit page is read with one range read of the audit keys, not one per 64 keys', async () => {
    const tenant = gate.forTenant('pages');
    for (let i = 0; i < 130; i += 1) {
      await tenant.acquire({ scope: `p${i}`, holder: 'w', ttlMs: 60_000 });
    }
    const target = parseEtcdUrl(`${etcdTestUrl('single')}?prefix=${prefix}`);
    const connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: 2_000,
      operationTimeoutMs: 5_000,
    });
    let ranges = 0;
    const counting = {
      range: (request: Parameters<EtcdConnection['range']>[0]) => {
        ranges += 1;
        return connection.range(request);
      },
    } as EtcdConnection;
    try {
      const keys = new EtcdKeys(target.prefix);
      const page = await readAuditPage(counting, keys.family('a', 'pages'), { limit: 120 });
      expect(page.items).toHaveLength(120);
      expect(page.nextAfterSeq).not.toBeNull();
      expect(ranges).toBe(1);
      const rest = await readAuditPage(counting, keys.family('a', 'pages'), {
        limit: 120,
        afterSeq: page.nextAfterSeq ?? 0,
      });
      expect(rest.items).toHaveLength(10);
      expect(rest.items[0]?.seq).toBeGreaterThan(page.items.at(-1)?.seq ?? 0);
    } finally {
      connection.close();
    }
  });

  it('a revision-order page reads the values of its own records only, however large the scope', async () => {
    const tenant = gate.forTenant('revpages');
    const grant = await tenant.acquire({ scope: 'big', holder: 'w', ttlMs: 60_000 });
    const value = 'v'.repeat(1000);
    const names = Array.from({ length: 60 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    for (let first = 0; first < names.length; first += 20) {
      await tenant.commit({
        scope: 'big',
        fence: grant.fence,
        operationId: `rev-seed-${first}`,
        writes: names.slice(first, first + 20).map((name) => ({ name, expectRevision: 0, value })),
      });
    }
    // Some records move on a revision or two, one of them to a tombstone.
    for (const [n, name] of ['r07', 'r31', 'r07', 'r50'].entries()) {
      const current = await tenant.getRecord('big', name);
      await tenant.commit({
        scope: 'big',
        fence: grant.fence,
        operationId: `rev-move-${n}`,
        writes: [
          name === 'r50'
            ? { name, expectRevision: current.revision, delete: true }
            : { name, expectRevision: current.revision, value },
        ],
      });
    }
    const target = parseEtcdUrl(`${etcdTestUrl('single')}?prefix=${prefix}`);
    const connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: 2_000,
      operationTimeoutMs: 5_000,
    });
    let valuesRead = 0;
    const counting = {
      range: async (request: Parameters<EtcdConnection['range']>[0]) => {
        const response = await connection.range(request);
        valuesRead += response.kvs.filter((kv) => kv.value.length > 0).length;
        return response;
      },
    } as EtcdConnection;
    const keys = new EtcdKeys(target.prefix);
    const page = (query: ListRecordsQuery) =>
      listRecordsPage(counting, keys, 'revpages', 'big', query, DEFAULT_LIMITS.maxPageBytes);
    try {
      const all = await tenant.listRecords('big');
      const expected = (descending: boolean) => {
        const names = [...all]
          .sort((a, b) => a.revision - b.revision || (a.name < b.name ? -1 : 1))
          .map((record) => record.name);
        return descending ? names.reverse() : names;
      };
      for (const direction of ['asc', 'desc'] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          valuesRead = 0;
          const answer = await page({ order: 'revision', direction, limit: 4, cursor });
          expect(valuesRead, direction).toBeLessThanOrEqual(4);
          seen.push(...answer.items.map((record) => record.name));
          cursor = answer.nextCursor ?? undefined;
        } while (cursor !== undefined);
        expect(seen, direction).toEqual(expected(direction === 'desc'));
      }
    } finally {
      connection.close();
    }
  });

  it('a claim reads the values of about the intents it can take, however many are open', async () => {
    const tenant = gate.forTenant('claimreads');
    const grant = await tenant.acquire({ scope: 'many', holder: 'w', ttlMs: 60_000 });
    const payload = 'p'.repeat(2000);
    const keys = Array.from({ length: 200 }, (_, i) => `e${String(i).padStart(3, '0')}`);
    for (let first = 0; first < keys.length; first += 16) {
      await tenant.commit({
        scope: 'many',
        fence: grant.fence,
        operationId: `claim-reads-${first}`,
        intents: keys
          .slice(first, first + 16)
          .map((effectKey) => ({ effectKey, target: 'crm', payload })),
      });
    }
    const target = parseEtcdUrl(`${etcdTestUrl('single')}?prefix=${prefix}`);
    const connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: 2_000,
      operationTimeoutMs: 5_000,
    });
    const etcdKeys = new EtcdKeys(target.prefix);
    const intentFamily = etcdKeys.family('i', 'claimreads');
    let intentsRead = 0;
    let bytesRead = 0;
    const counting = new Proxy(connection, {
      get(real, name) {
        if (name !== 'readTxn') {
          const member = Reflect.get(real, name) as unknown;
          return typeof member === 'function' ? (member as () => unknown).bind(real) : member;
        }
        return async (request: Parameters<EtcdConnection['readTxn']>[0]) => {
          const response = await real.readTxn(request);
          for (const op of response.responses) {
            for (const kv of op.response_range?.kvs ?? []) {
              bytesRead += kv.value.length;
              if (kv.key.toString().startsWith(intentFamily)) intentsRead += 1;
            }
          }
          return response;
        };
      },
    });
    const engine = new EtcdEngine(
      counting,
      etcdKeys,
      new KeyCache(),
      systemClock,
      DEFAULT_ETCD_LIMITS,
    );
    const claim = (limit: number) =>
      engine.run('claimreads', (s) => planClaim(s, { dispatcher: 'd1', ttlMs: 60_000, limit }));
    try {
      const first = await claim(1);
      expect(first.map((intent) => intent.effectKey)).toEqual(['e000']);
      expect(intentsRead).toBeLessThanOrEqual(16);
      // The heads of 200 open intents, not their 400 KB of payloads.
      expect(bytesRead).toBeLessThan(100 * payload.length);
      intentsRead = 0;
      const next = await claim(5);
      expect(next.map((intent) => intent.effectKey)).toEqual([
        'e001',
        'e002',
        'e003',
        'e004',
        'e005',
      ]);
      expect(intentsRead).toBeLessThanOrEqual(16);
      // A claim cut by the byte budget reads one chunk past the intents it takes, at most.
      intentsRead = 0;
      const budgeted = await engine.run('claimreads', (s) =>
        planClaim(s, { dispatcher: 'd1', ttlMs: 60_000, limit: 100 }, { maxBytes: 10_000 }),
      );
      expect(budgeted.map((intent) => intent.effectKey)).toEqual(['e006', 'e007', 'e008', 'e009']);
      expect(intentsRead).toBeLessThanOrEqual(16);
    } finally {
      connection.close();
    }
  });

  it('group commit: commits on distinct scopes share Txns, one scope twice waits its turn, each caller gets its own answer', async () => {
    const scopes = Array.from({ length: 24 }, (_, i) => `g${i}`);
    const grants = await Promise.all(
      scopes.map((scope) => gate.acquire({ scope, holder: 'w', ttlMs: 60_000 })),
    );
    const before = (await gate.audit({ kind: 'commit', limit: 1000 })).items.length;
    const results = await Promise.all(
      grants.flatMap((grant) => [
        gate.commit({
          scope: grant.scope,
          fence: grant.fence,
          operationId: `${grant.scope}-a`,
          writes: [{ name: 'm', expectRevision: 0, value: 'a' }],
        }),
        gate.commit({
          scope: grant.scope,
          fence: grant.fence,
          operationId: `${grant.scope}-b`,
          writes: [{ name: 'm', expectRevision: 0, value: 'b' }],
        }),
      ]),
    );
    // Per scope, the first commit wins and the second is stale: they never ran in one Txn.
    for (let i = 0; i < scopes.length; i += 1) {
      const pair = [results[2 * i], results[2 * i + 1]].map((r) => r?.outcome).sort();
      expect(pair).toEqual(['committed', 'rejected']);
    }
    const commits = (await gate.audit({ kind: 'commit', limit: 1000 })).items.slice(before);
    expect(commits).toHaveLength(48);
    // Fewer Txns than commits: several commits share one revision.
    const revisions = new Set(commits.map((entry) => Math.floor(entry.seq / 1024)));
    expect(revisions.size).toBeLessThan(48);
  });
});

/**
 * Scopes the rollout's first step (50 %) leaves on fromPolicy, as many as `admitted`: a rollout
 * that lists them with the admitted ones does not complete at its first step, so it can roll back.
 */
function rampedOut(rolloutId: string, admitted: string[]): string[] {
  for (const scope of admitted) {
    if (!admits(rolloutId, scope, 50)) throw new Error(`${scope} is not ramped at 50 %`);
  }
  const out: string[] = [];
  for (let i = 0; out.length < 1; i += 1) {
    if (!admits(rolloutId, `wf-out-${i}`, 50)) out.push(`wf-out-${i}`);
  }
  return out;
}

/**
 * Commits `count` intents on `scope` under `fence`, 13 a commit in one batch: keys
 * `<prefix>-<batch>-<nn>`, every one pending.
 */
async function commitIntents(
  tenant: Fencegate,
  scope: string,
  fence: number,
  prefix: string,
  count: number,
): Promise<void> {
  const commits = [];
  for (let start = 0, batch = 0; start < count; start += 13, batch += 1) {
    commits.push({
      scope,
      fence,
      operationId: `${prefix}-${batch}`,
      intents: Array.from({ length: Math.min(13, count - start) }, (_, i) => ({
        effectKey: `${prefix}-${batch}-${String(i).padStart(2, '0')}`,
        target: 'notify',
        payload: {},
      })),
    });
  }
  for (const item of await tenant.commitMany(commits)) {
    expect(item.ok && item.result.outcome).toBe('committed');
  }
}
