/**
 * The take-over right of worker tokens: a worker token created with `mayTakeOver` prefixes may
 * take over scopes under them (the audit entry names the token) and nothing else; without the
 * right, or outside its prefixes, a takeover is `403 forbidden` and changes nothing; operators
 * keep every right. Every store keeps the prefixes with the token; the rules are core's and run on
 * the in-memory reference store. Created over HTTP, through the TS admin client and with
 * `fencegate token create --may-take-over`.
 *
 * A grant is bound to the worker token that made it, on every store: another worker token of the
 * tenant naming its holder cannot release, renew or acquire it again (so it cannot go around the
 * take-over right), while a grant an operator or a cutover made stays open to the tenant's
 * workers. The fence stays the capability of commits. Audit entries that move authority name
 * their token, and a deleted scope is re-created only by an operator.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FencegateAdminClient } from '../../src/client/admin-client.js';
import { FencegateClient } from '../../src/client/client.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import type { AuditEntry, Grant, ScopeState } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';
import { AREA_STORES, storesFor, type StoreFactory } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';

const ADMIN = 'admin-token-for-take-over-tests';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(store: Store): Promise<FastifyInstance> {
  const app = await buildServer({ store, adminToken: ADMIN, tokenCacheTtlMs: 0 });
  cleanups.push(() => app.close());
  return app;
}

function send(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  token: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
  });
}

function errorOf(response: LightMyRequestResponse): { code: string; message: string } {
  return response.json<{ error: { code: string; message: string } }>().error;
}

/** A fresh store of `stores`, closed after the test. */
async function freshStore(stores: StoreFactory): Promise<{ store: Store; url: string }> {
  const opened = await stores.open();
  cleanups.push(() => opened.store.close());
  return opened;
}

/** A fresh in-memory reference store, closed after the test. */
function memory(): Store {
  const store = memoryStore();
  cleanups.push(() => store.close());
  return store;
}

/** A server on `store` (fresh) with an operator, a plain worker and a worker with the right. */
async function fixture(store: Store) {
  const app = await serve(store);
  const operatorIssued = await issueToken(store, { tenant: 'acme', role: 'operator' });
  const operator = operatorIssued.token;
  const owner = await issueToken(store, { tenant: 'acme', role: 'worker' });
  const plainWorker = owner.token;
  const otherWorker = await issueToken(store, { tenant: 'acme', role: 'worker' });
  const created = await send(app, 'POST', '/v1/admin/tokens', ADMIN, {
    tenant: 'acme',
    role: 'worker',
    label: 'graph replicas',
    mayTakeOver: ['langgraph/', 'jobs/a'],
  });
  expect(created.statusCode).toBe(201);
  const rightful = created.json<{ id: string; token: string; mayTakeOver: string[] }>();
  const acquire = async (scope: string, holder: string) => {
    const grant = await send(app, 'POST', '/v1/leases/acquire', plainWorker, {
      scope,
      holder,
      ttlMs: 60_000,
    });
    expect(grant.statusCode).toBe(200);
    return grant.json<Grant>();
  };
  const scopeOf = async (scope: string) =>
    (
      await send(app, 'GET', `/v1/scopes/${encodeURIComponent(scope)}`, operator)
    ).json<ScopeState>();
  const takeover = (token: string, scope: string, body: Record<string, unknown> = {}) =>
    send(app, 'POST', `/v1/scopes/${encodeURIComponent(scope)}/takeover`, token, {
      holder: 'replica-2',
      ttlMs: 60_000,
      ...body,
    });
  return {
    store,
    app,
    operator,
    operatorId: operatorIssued.record.id,
    plainWorker,
    plainWorkerId: owner.record.id,
    otherWorker: otherWorker.token,
    otherWorkerId: otherWorker.record.id,
    rightful,
    acquire,
    scopeOf,
    takeover,
  };
}

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** The fixture on a fresh store of `stores`. */
async function fixtureOn(stores: StoreFactory): Promise<Fixture> {
  return fixture((await freshStore(stores)).store);
}

/** The lease operations a worker makes as a grant's holder: release, renew, acquire, commit with release. */
function asHolder(f: Fixture, token: string, grant: Grant) {
  const { scope, holder, fence } = grant;
  return {
    release: () => send(f.app, 'POST', '/v1/leases/release', token, { scope, holder, fence }),
    renew: () =>
      send(f.app, 'POST', '/v1/leases/renew', token, { scope, holder, fence, ttlMs: 60_000 }),
    acquire: () =>
      send(f.app, 'POST', '/v1/leases/acquire', token, { scope, holder, ttlMs: 60_000 }),
    commitAndRelease: (operationId: string) =>
      send(f.app, 'POST', '/v1/commit', token, {
        scope,
        fence,
        operationId,
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
        release: true,
      }),
  };
}

function detailsOf(response: LightMyRequestResponse): Record<string, unknown> {
  return response.json<{ error: { details: Record<string, unknown> } }>().error.details;
}

async function auditOf(f: Fixture, scope: string): Promise<AuditEntry[]> {
  const page = await send(f.app, 'GET', `/v1/audit?scope=${encodeURIComponent(scope)}`, f.operator);
  return page.json<{ items: AuditEntry[] }>().items;
}

describe.each(AREA_STORES)('the take-over right on $name', (kind) => {
  const stores = storesFor(kind, 'take_over_right');

  it('creates a worker token with mayTakeOver and shows the prefixes in its answer and the listing', async () => {
    const { app, rightful } = await fixtureOn(stores);
    expect(rightful.mayTakeOver).toEqual(['langgraph/', 'jobs/a']);
    const listed = await send(app, 'GET', '/v1/admin/tokens?tenant=acme', ADMIN);
    const items = listed.json<{ items: { id: string; mayTakeOver?: string[] }[] }>().items;
    expect(items.find((item) => item.id === rightful.id)?.mayTakeOver).toEqual([
      'langgraph/',
      'jobs/a',
    ]);
    // Tokens without the right show no mayTakeOver at all.
    expect(items.filter((item) => item.mayTakeOver === undefined)).toHaveLength(3);
  });

  it('keeps the right in the store: another server on the same store honours it', async () => {
    const { store, url } = await freshStore(stores);
    const { rightful, acquire } = await fixture(store);
    await acquire('jobs/a-1', 'replica-1');
    const other = await stores.reopen(url);
    cleanups.push(() => other.close());
    const second = await serve(other);
    const taken = await send(second, 'POST', '/v1/scopes/jobs%2Fa-1/takeover', rightful.token, {
      holder: 'replica-3',
    });
    expect(taken.statusCode).toBe(200);
    expect(taken.json<Grant>()).toMatchObject({ fence: 2, holder: 'replica-3' });
  });
});

describe("the take-over right's rules", () => {
  it('refuses mayTakeOver on an operator token, an empty list and a bad prefix with invalid_request, creating nothing', async () => {
    const { store, app } = await fixture(memory());
    const before = await store.countTokens();
    for (const [body, field] of [
      [{ tenant: 'acme', role: 'operator', mayTakeOver: ['a/'] }, /only for worker tokens/],
      [{ tenant: 'acme', role: 'worker', mayTakeOver: [] }, /mayTakeOver/],
      [{ tenant: 'acme', role: 'worker', mayTakeOver: ['has space'] }, /mayTakeOver\[0\]/],
      [{ tenant: 'acme', role: 'worker', mayTakeOver: 'a/' }, /mayTakeOver/],
    ] as const) {
      const response = await send(app, 'POST', '/v1/admin/tokens', ADMIN, body);
      expect(response.statusCode).toBe(400);
      expect(errorOf(response).code).toBe('invalid_request');
      expect(errorOf(response).message).toMatch(field);
    }
    expect(await store.countTokens()).toBe(before);
  });

  it('lets a worker with the right take over a live scope under its prefix; the audit entry names the token', async () => {
    const { app, operator, rightful, acquire, takeover } = await fixture(memory());
    const first = await acquire('langgraph/thread-1', 'replica-1');
    const taken = await takeover(rightful.token, 'langgraph/thread-1', { reason: 'double text' });
    expect(taken.statusCode).toBe(200);
    expect(taken.json<Grant>()).toMatchObject({ fence: first.fence + 1, holder: 'replica-2' });

    const audit = await send(
      app,
      'GET',
      '/v1/audit?scope=langgraph%2Fthread-1&kind=takeover',
      operator,
    );
    const entries = audit.json<{ items: AuditEntry[] }>().items;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      outcome: 'granted',
      holder: 'replica-2',
      tokenId: rightful.id,
    });
    expect(entries[0]!.reason).toBe(`taken over by worker token ${rightful.id}: double text`);
  });

  it('answers 403 forbidden outside the prefixes and without the right, and changes nothing', async () => {
    const { plainWorker, rightful, acquire, scopeOf, takeover } = await fixture(memory());
    await acquire('orders/1', 'replica-1');
    await acquire('langgraph/thread-2', 'replica-1');
    const outside = await takeover(rightful.token, 'orders/1');
    expect(outside.statusCode).toBe(403);
    expect(errorOf(outside)).toMatchObject({ code: 'forbidden' });
    expect(errorOf(outside).message).toMatch(/"langgraph\/", "jobs\/a".*orders\/1.*mayTakeOver/);
    // A prefix is a prefix of the name, not a path segment.
    expect((await takeover(rightful.token, 'jobs/b')).statusCode).toBe(403);

    const without = await takeover(plainWorker, 'langgraph/thread-2');
    expect(without.statusCode).toBe(403);
    expect(errorOf(without).message).toMatch(
      /operator token, or a worker token created with mayTakeOver/,
    );

    for (const scope of ['orders/1', 'langgraph/thread-2']) {
      expect(await scopeOf(scope)).toMatchObject({ holder: 'replica-1', fence: 1 });
    }
  });

  it('keeps the full right of operators: any scope, and the audit reason is theirs', async () => {
    const { app, operator, acquire, takeover } = await fixture(memory());
    await acquire('orders/2', 'replica-1');
    const taken = await takeover(operator, 'orders/2', { reason: 'ops' });
    expect(taken.statusCode).toBe(200);
    const audit = await send(app, 'GET', '/v1/audit?scope=orders%2F2&kind=takeover', operator);
    expect(audit.json<{ items: AuditEntry[] }>().items[0]!.reason).toBe('ops');
  });
});

describe('creating take-over tokens from the clients', () => {
  it('FencegateAdminClient creates one over HTTP and FencegateClient takes over with it', async () => {
    const app = await serve(memory());
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const admin = new FencegateAdminClient({ url, adminToken: ADMIN });
    const created = await admin.createToken({
      tenant: 'acme',
      role: 'worker',
      mayTakeOver: ['langgraph/'],
    });
    expect(created.mayTakeOver).toEqual(['langgraph/']);
    expect((await admin.listTokens('acme')).map((t) => t.mayTakeOver)).toEqual([['langgraph/']]);
    await expect(
      admin.createToken({ tenant: 'acme', role: 'operator', mayTakeOver: ['langgraph/'] }),
    ).rejects.toMatchObject({ code: 'invalid_request' });

    const worker = new FencegateClient({ url, token: created.token });
    await worker.acquire({ scope: 'langgraph/t', holder: 'replica-1', ttlMs: 60_000 });
    await expect(worker.takeover('langgraph/t', { holder: 'replica-2' })).resolves.toMatchObject({
      fence: 2,
      holder: 'replica-2',
    });
    await expect(worker.takeover('other/t', { holder: 'replica-2' })).rejects.toMatchObject({
      code: 'forbidden',
    });
  });

  it('fencegate token create --may-take-over stores the prefixes; with --role operator it is a usage error', async () => {
    // The CLI opens its store from a URL: a SQLite file.
    const dir = tempDir();
    cleanups.push(() => Promise.resolve(dir.cleanup()));
    const store = `sqlite:${dir.path}/tokens.db`;
    const output = { stdout: '', stderr: '' };
    const io = {
      stdout: (text: string) => (output.stdout += text),
      stderr: (text: string) => (output.stderr += text),
      env: {},
    };
    const args = ['token', 'create', '--tenant', 'acme', '--store', store, '--create-store'];
    expect(
      await main(
        [...args, '--role', 'worker', '--may-take-over', 'a/', '--may-take-over', 'b/'],
        io,
      ),
    ).toBe(0);
    expect(output.stderr).toMatch(/may take over scopes starting with a\/, b\//);
    expect(await main([...args, '--role', 'operator', '--may-take-over', 'a/'], io)).toBe(2);
    expect(output.stderr).toMatch(/--may-take-over is only for --role worker/);

    output.stdout = '';
    expect(await main(['token', 'list', '--store', store], io)).toBe(0);
    const lines = output.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/MAY TAKE OVER$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/worker .*a\/,b\/$/);
  });
});

describe.each(AREA_STORES)('grants bound to the token that made them on $name', (kind) => {
  const stores = storesFor(kind, 'grant_tokens');

  it('refuses another worker token the release, renew, same-holder acquire and releasing commit of a grant, as not_holder naming the grant token; nothing changes', async () => {
    const f = await fixtureOn(stores);
    const grant = await f.acquire('orders/1', 'replica-1');
    const intruder = asHolder(f, f.otherWorker, grant);
    for (const response of [
      await intruder.release(),
      await intruder.renew(),
      await intruder.acquire(),
      await intruder.commitAndRelease('intruder-release'),
    ]) {
      expect(response.statusCode).toBe(409);
      expect(errorOf(response).code).toBe('not_holder');
      expect(errorOf(response).message).toMatch(/worker token .*mayTakeOver covers the scope/);
      expect(detailsOf(response)).toMatchObject({
        grantTokenId: f.plainWorkerId,
        holder: 'replica-1',
        currentFence: 1,
      });
    }
    expect(await f.scopeOf('orders/1')).toMatchObject({
      holder: 'replica-1',
      fence: 1,
      leaseExpiresAt: grant.leaseExpiresAt,
    });
    const record = await send(f.app, 'GET', '/v1/scopes/orders%2F1/records/r', f.operator);
    expect(record.json<{ exists: boolean }>().exists).toBe(false);
    // Refused, the releasing commit stored no outcome: the operation id is still free.
    const operation = await send(f.app, 'GET', '/v1/operations/intruder-release', f.operator);
    expect(operation.statusCode).toBe(404);
    const refusals = (await auditOf(f, 'orders/1')).filter((e) => e.outcome === 'rejected');
    expect(refusals.map((e) => [e.kind, e.reason, e.tokenId])).toEqual([
      ['release', 'not_holder', f.otherWorkerId],
      ['renew', 'not_holder', f.otherWorkerId],
      ['acquire', 'not_holder', f.otherWorkerId],
      ['commit', 'not_holder', f.otherWorkerId],
    ]);
  });

  it('lets the grant token, an operator and a worker whose take-over right covers the scope act on the grant', async () => {
    const f = await fixtureOn(stores);
    const own = await f.acquire('orders/2', 'replica-1');
    expect((await asHolder(f, f.plainWorker, own).renew()).statusCode).toBe(200);
    expect((await asHolder(f, f.plainWorker, own).acquire()).json<Grant>().reacquired).toBe(true);
    expect((await asHolder(f, f.operator, own).renew()).statusCode).toBe(200);
    expect((await asHolder(f, f.operator, own).release()).statusCode).toBe(200);

    const thread = await f.acquire('langgraph/thread-9', 'replica-1');
    const covered = asHolder(f, f.rightful.token, thread);
    expect((await covered.renew()).statusCode).toBe(200);
    expect((await covered.commitAndRelease('covered-release')).json()).toMatchObject({
      outcome: 'committed',
    });
    expect(await f.scopeOf('langgraph/thread-9')).toMatchObject({ holder: null, fence: 1 });
  });

  it('lets any worker token of the tenant renew and release a grant an operator, a cutover or the process made', async () => {
    const f = await fixtureOn(stores);
    const taken = await f.takeover(f.operator, 'orders/3', { holder: 'controller' });
    expect((await asHolder(f, f.otherWorker, taken.json<Grant>()).renew()).statusCode).toBe(200);
    expect((await asHolder(f, f.plainWorker, taken.json<Grant>()).release()).statusCode).toBe(200);

    await f.acquire('orders/4', 'replica-1');
    await send(f.app, 'POST', '/v1/policies', f.operator, { version: 'v2' });
    const cutover = await send(f.app, 'POST', '/v1/cutovers', f.operator, {
      toPolicy: 'v2',
      holder: 'controller',
      scopes: ['orders/4'],
    });
    expect(cutover.statusCode).toBe(200);
    const moved = { scope: 'orders/4', holder: 'controller', fence: 2 } as Grant;
    expect((await asHolder(f, f.otherWorker, moved).renew()).statusCode).toBe(200);
    expect((await asHolder(f, f.plainWorker, moved).release()).statusCode).toBe(200);

    const inProcess = await f.store.acquire('acme', {
      scope: 'orders/5',
      holder: 'replica-1',
      ttlMs: 60_000,
    });
    expect((await asHolder(f, f.otherWorker, inProcess).release()).statusCode).toBe(200);
  });

  it('names the token of an abandon in its audit entry, as of any refused commit', async () => {
    const f = await fixtureOn(stores);
    const abandoned = await send(f.app, 'POST', '/v1/operations/lost-op/abandon', f.otherWorker, {
      reason: 'worker gave up',
    });
    expect(abandoned.json()).toMatchObject({ outcome: 'rejected' });
    const page = await send(f.app, 'GET', '/v1/audit', f.operator);
    const entries = page
      .json<{ items: AuditEntry[] }>()
      .items.filter((e) => e.operationId === 'lost-op')
      .map((e) => [e.kind, e.reason, e.tokenId]);
    expect(entries).toEqual([['commit', 'operation_abandoned', f.otherWorkerId]]);
  });

  it('names the token in every audit entry that moves authority, and keeps the fence the capability of commits', async () => {
    const f = await fixtureOn(stores);
    const grant = await f.acquire('orders/6', 'replica-1');
    await asHolder(f, f.plainWorker, grant).renew();
    // A worker handed the fence by the acquirer commits with its own token.
    const commit = await send(f.app, 'POST', '/v1/commit', f.otherWorker, {
      scope: 'orders/6',
      fence: grant.fence,
      operationId: 'handed-fence',
      writes: [{ name: 'r', expectRevision: 0, value: 1 }],
    });
    expect(commit.json()).toMatchObject({ outcome: 'committed' });
    await asHolder(f, f.plainWorker, grant).release();
    await f.takeover(f.operator, 'orders/6');
    await send(f.app, 'POST', '/v1/scopes/orders%2F6/cancel', f.operator, {});
    await f.store.acquire('acme', { scope: 'orders/6', holder: 'in-process', ttlMs: 1000 });

    const entries = (await auditOf(f, 'orders/6')).map((e) => [e.kind, e.outcome, e.tokenId]);
    expect(entries).toEqual([
      ['acquire', 'granted', f.plainWorkerId],
      ['renew', 'ok', f.plainWorkerId],
      ['commit', 'committed', f.otherWorkerId],
      ['release', 'ok', f.plainWorkerId],
      ['takeover', 'granted', f.operatorId],
      ['cancel', 'ok', f.operatorId],
      ['acquire', 'granted', undefined],
    ]);
    const verify = await send(f.app, 'GET', '/v1/verify', f.operator);
    expect(verify.json()).toMatchObject({ ok: true });
  });

  it('re-creates a scope an operator deleted only for an operator: a worker with the take-over right is refused scope_deleted', async () => {
    const f = await fixtureOn(stores);
    await f.acquire('langgraph/thread-d', 'replica-1');
    const deleted = await send(f.app, 'DELETE', '/v1/scopes/langgraph%2Fthread-d', f.operator);
    expect(deleted.statusCode).toBe(200);
    const refused = await f.takeover(f.rightful.token, 'langgraph/thread-d');
    expect(refused.statusCode).toBe(409);
    expect(errorOf(refused)).toMatchObject({ code: 'scope_deleted' });
    expect(errorOf(refused).message).toMatch(/only an operator re-creates it/);
    expect(await f.scopeOf('langgraph/thread-d')).toMatchObject({ status: 'deleted', fence: 2 });

    const recreated = await f.takeover(f.operator, 'langgraph/thread-d');
    expect(recreated.statusCode).toBe(200);
    expect(await f.scopeOf('langgraph/thread-d')).toMatchObject({ status: 'active', fence: 3 });
  });
});
