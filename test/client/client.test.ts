/**
 * FencegateClient against a real server on the in-memory reference store: the library's errors come back
 * from the wire, 404s become null where the FencegateApi says so, and retries never repeat an
 * effect. Lost traffic is produced by a proxy (lost request, lost reply) and by a fault-injecting
 * wrapper around the store (a lost store reply: outcome_unknown); the order of events is fixed by
 * the test, not by timing.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateClient, FencegateError, isFencegateError } from '../../src/client/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { MemoryStore } from '../../src/store/memory/memory-store.js';
import { faultyStore, type FaultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitRequest } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { FaultProxy } from './fault-proxy.js';

const TENANT = 'acme';
const SCOPE = 'wf-1/memory';

interface Harness {
  store: FaultyStore;
  inner: MemoryStore;
  app: FastifyInstance;
  url: string;
  token: string;
  proxy?: FaultProxy;
  client(options?: { viaProxy?: boolean; retries?: number; timeoutMs?: number }): FencegateClient;
}

let harness: Harness | undefined;

async function start(withProxy = false): Promise<Harness> {
  const inner = memoryStore(new ManualClock());
  const store = faultyStore(inner);
  const app = await buildServer({ store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const { token } = await issueToken(inner, { tenant: TENANT, role: 'operator' });
  const proxy = withProxy ? new FaultProxy(url) : undefined;
  const proxyUrl = proxy === undefined ? url : await proxy.start();
  harness = {
    store,
    inner,
    app,
    url,
    token,
    ...(proxy === undefined ? {} : { proxy }),
    client: (options = {}) =>
      new FencegateClient({
        url: options.viaProxy === false ? url : proxyUrl,
        token,
        retries: options.retries ?? 3,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      }),
  };
  return harness;
}

afterEach(async () => {
  if (harness === undefined) return;
  await harness.proxy?.stop();
  await harness.app.close();
  await harness.inner.close();
  harness = undefined;
});

async function failure(call: Promise<unknown>): Promise<FencegateError> {
  try {
    await call;
  } catch (error) {
    if (isFencegateError(error)) return error;
    throw error;
  }
  throw new Error('expected a FencegateError');
}

function write(
  fence: number,
  operationId: string,
  value: unknown,
  expectRevision = 0,
): CommitRequest {
  return {
    scope: SCOPE,
    fence,
    operationId,
    writes: [{ name: 'doc', expectRevision, value }],
    intents: [{ effectKey: `fx-${operationId}`, target: 'crm', payload: { value } }],
  };
}

/** How many accepted commits the audit log holds for an operationId. */
async function committedCount(h: Harness, operationId: string): Promise<number> {
  const page = await h.inner.readAudit(TENANT, { kind: 'commit', limit: 1000 });
  return page.items.filter((e) => e.operationId === operationId && e.outcome === 'committed')
    .length;
}

describe('FencegateClient over a real server', () => {
  it('implements the API with the library errors and null for what is absent', async () => {
    const h = await start();
    const client = h.client();
    const grant = await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    expect(grant).toMatchObject({ scope: SCOPE, fence: 1, holder: 'w1', reacquired: false });

    const held = await failure(client.acquire({ scope: SCOPE, holder: 'w2', ttlMs: 10_000 }));
    expect(held).toBeInstanceOf(FencegateError);
    expect(held).toMatchObject({ code: 'lease_held', httpStatus: 409, retryable: true });
    expect(held.details).toMatchObject({ holder: 'w1' });

    const committed = await client.commit(write(1, 'op-1', 'v1'));
    expect(committed).toMatchObject({ outcome: 'committed', replayed: false });
    expect(await client.commit(write(1, 'op-1', 'v1'))).toMatchObject({ replayed: true });
    const rejected = await client.commit(write(1, 'op-2', 'stale'));
    expect(rejected).toMatchObject({ outcome: 'rejected', error: { code: 'stale_revision' } });
    expect((await failure(client.commit(write(1, 'op-1', 'other')))).code).toBe(
      'operation_id_conflict',
    );

    expect(await client.getOperation('op-1')).toEqual(committed);
    expect(await client.getOperation('op-404')).toBeNull();
    expect(await client.getScope('never')).toBeNull();
    expect(await client.getIntent('fx-404')).toBeNull();
    expect(await client.getIntent('fx-op-1')).toMatchObject({ status: 'pending' });
    expect(await client.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'v1', revision: 1 });
    expect(await client.listRecords(SCOPE)).toHaveLength(1);
    expect((await client.listScopes({ prefix: 'wf-' })).items).toHaveLength(1);
    expect((await client.listIntents({ status: 'pending' })).items).toHaveLength(1);
    expect((await client.audit({ kind: 'commit' })).items.length).toBeGreaterThanOrEqual(2);

    expect(await client.takeover(SCOPE, { holder: 'op', reason: 'stuck' })).toMatchObject({
      fence: 2,
    });
    expect(await client.cancel(SCOPE, { reason: 'stop' })).toMatchObject({
      fence: 3,
      cancelledIntents: 1,
    });
    expect(await client.deleteScope(SCOPE, { reason: 'done' })).toEqual({ fence: 4 });
    expect((await failure(client.deleteScope(SCOPE))).code).toBe('scope_deleted');

    const invalid = await failure(
      client.acquire({ scope: 'bad scope', holder: 'w', ttlMs: 1_000 }),
    );
    expect(invalid).toMatchObject({ code: 'invalid_request', details: { field: 'scope' } });
    // Names go into paths; one that cannot be a path segment is refused before it is sent.
    expect((await failure(client.getScope('..'))).code).toBe('invalid_request');
    expect((await failure(client.getRecord(SCOPE, ''))).code).toBe('invalid_request');
    expect(await client.getScope('a/b:c@d.e')).toBeNull();

    const wrongToken = new FencegateClient({ url: h.url, token: 'fg_wrong' });
    expect((await failure(wrongToken.listScopes())).code).toBe('unauthorized');
  });

  it('resolves a commit whose reply was lost through the stored outcome, committing once', async () => {
    const h = await start(true);
    const client = h.client();
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    h.proxy?.inject('POST', '/v1/commit', 'drop-reply');
    const result = await client.commit(write(1, 'op-lost-reply', 'v1'));
    expect(result).toMatchObject({ outcome: 'committed', operationId: 'op-lost-reply' });
    expect(h.proxy?.log).toEqual([
      'POST /v1/leases/acquire pass',
      'POST /v1/commit drop-reply',
      'GET /v1/operations/op-lost-reply pass',
    ]);
    expect(await committedCount(h, 'op-lost-reply')).toBe(1);
    expect((await client.listIntents()).items).toHaveLength(1);
  });

  it('resends a commit whose request was lost, under the same operationId', async () => {
    const h = await start(true);
    const client = h.client();
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    h.proxy?.inject('POST', '/v1/commit', 'drop-request');
    const result = await client.commit(write(1, 'op-lost-request', 'v1'));
    expect(result).toMatchObject({ outcome: 'committed', replayed: false });
    expect(h.proxy?.log.slice(1)).toEqual([
      'POST /v1/commit drop-request',
      'GET /v1/operations/op-lost-request pass',
      'POST /v1/commit pass',
    ]);
    expect(await committedCount(h, 'op-lost-request')).toBe(1);
  });

  it('resolves outcome_unknown from the server through getOperation, and returns a stored rejection too', async () => {
    const h = await start();
    const client = h.client();
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    h.store.inject({ method: 'commit', fault: 'lose-reply' });
    expect(await client.commit(write(1, 'op-unknown', 'v1'))).toMatchObject({
      outcome: 'committed',
    });
    expect(await committedCount(h, 'op-unknown')).toBe(1);

    h.store.inject({ method: 'commit', fault: 'lose-reply' });
    expect(await client.commit(write(1, 'op-unknown-stale', 'v2'))).toMatchObject({
      outcome: 'rejected',
      error: { code: 'stale_revision' },
    });
  });

  it('retries a commit the store refused before acting (store_unavailable), once it is back', async () => {
    const h = await start();
    const client = h.client();
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    h.store.inject({ method: 'commit', fault: 'fail-before', times: 2 });
    expect(await client.commit(write(1, 'op-retry', 'v1'))).toMatchObject({ outcome: 'committed' });
    expect(h.store.calls.filter((c) => c.method === 'commit').map((c) => c.fault)).toEqual([
      'fail-before',
      'fail-before',
      null,
    ]);
  });

  it('reports outcome_unknown when the outcome stays unknown after every retry and cannot be settled', async () => {
    const h = await start();
    const client = h.client({ retries: 2 });
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    // The first commit runs and its reply is lost; after it, the store answers nothing.
    h.store.inject({ method: 'commit', fault: 'lose-reply' });
    h.store.inject({ method: 'commit', fault: 'fail-before', times: Infinity });
    h.store.inject({ method: 'getOperation', fault: 'fail-before', times: Infinity });
    h.store.inject({ method: 'abandonOperation', fault: 'fail-before', times: Infinity });
    const error = await failure(client.commit(write(1, 'op-dark', 'v1')));
    expect(error).toMatchObject({ code: 'outcome_unknown', details: { operationId: 'op-dark' } });
    expect(error.message).toContain("abandonOperation('op-dark')");
    h.store.heal();
    expect(await client.getOperation('op-dark')).toMatchObject({ outcome: 'committed' });
  });

  it('settles an outcome that stays unknown with abandonOperation: the commit that landed is answered', async () => {
    const h = await start();
    const client = h.client({ retries: 1 });
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    h.store.inject({ method: 'commit', fault: 'lose-reply' });
    h.store.inject({ method: 'commit', fault: 'fail-before', times: Infinity });
    h.store.inject({ method: 'getOperation', fault: 'fail-before', times: Infinity });
    expect(await client.commit(write(1, 'op-landed', 'v1'))).toMatchObject({
      outcome: 'committed',
      operationId: 'op-landed',
    });
    expect(await committedCount(h, 'op-landed')).toBe(1);
  });

  it('settles a commit still in flight as operation_abandoned, and the commit then never applies', async () => {
    const h = await start();
    const client = h.client({ retries: 1, timeoutMs: 200 });
    await client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 });
    // Each commit reaches the store late: the client times out and settles the outcome first.
    let late = 0;
    h.store.inject({
      method: 'commit',
      fault: {
        delay: {
          until: () =>
            new Promise<void>((resolve) => setTimeout(resolve, 600)).then(() => {
              late += 1;
            }),
        },
      },
      times: 2,
    });
    const answer = await client.commit(write(1, 'op-in-flight', 'v1'));
    expect(answer).toMatchObject({
      outcome: 'rejected',
      operationId: 'op-in-flight',
      replayed: false,
      error: { code: 'operation_abandoned' },
    });
    expect(late).toBeLessThan(2);
    // The two commits the client sent reach the store now, after the abandonment: neither applies.
    while (late < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await committedCount(h, 'op-in-flight')).toBe(0);
    expect((await h.inner.getRecord(TENANT, SCOPE, 'doc')).exists).toBe(false);
    expect(await h.inner.getOperation(TENANT, 'op-in-flight')).toEqual(answer);
    // The connections of the requests the client gave up on are not closed by the client.
    h.app.server.closeAllConnections();
  });

  it('does not resend a lease operation whose reply was lost, and says the outcome is unknown', async () => {
    const h = await start(true);
    const client = h.client();
    h.proxy?.inject('POST', '/v1/leases/acquire', 'drop-reply');
    const error = await failure(client.acquire({ scope: SCOPE, holder: 'w1', ttlMs: 10_000 }));
    expect(error.code).toBe('outcome_unknown');
    expect(h.proxy?.log).toEqual(['POST /v1/leases/acquire drop-reply']);
    expect(await client.getScope(SCOPE)).toMatchObject({ fence: 1, holder: 'w1' });
  });

  it('answers outcome_unknown, not store_unavailable, when an idempotent write lost its reply and the server went away', async () => {
    const h = await start(true);
    const client = h.client({ retries: 2 });
    h.proxy?.inject('POST', '/v1/policies', 'drop-reply-then-down');
    const error = await failure(client.registerPolicy({ version: 'v9' }));
    expect(error.code).toBe('outcome_unknown');
    expect(h.proxy?.log).toEqual(['POST /v1/policies drop-reply-then-down']);
    // The write was taken: "nothing changed" would have been false.
    const direct = h.client({ viaProxy: false });
    expect((await direct.listPolicies()).map((policy) => policy.version)).toContain('v9');
  });

  it('retries reads after a lost connection', async () => {
    const h = await start(true);
    const client = h.client();
    h.proxy?.inject('GET', '/v1/scopes', 'drop-reply', 2);
    expect(await client.listScopes()).toEqual({ items: [], nextCursor: null });
    expect(h.proxy?.log).toEqual([
      'GET /v1/scopes drop-reply',
      'GET /v1/scopes drop-reply',
      'GET /v1/scopes pass',
    ]);
  });

  it('answers store_unavailable when no server listens', async () => {
    const h = await start();
    await h.app.close();
    const client = h.client({ viaProxy: false, retries: 1 });
    expect((await failure(client.listScopes())).code).toBe('store_unavailable');
    expect((await failure(client.acquire({ scope: SCOPE, holder: 'w', ttlMs: 1_000 }))).code).toBe(
      'store_unavailable',
    );
    expect((await failure(client.commit(write(1, 'op-nowhere', 'v')))).code).toBe(
      'store_unavailable',
    );
  });
});
