/**
 * Batched commits over HTTP (`POST /v1/commits`) on every store, through a real server with group
 * commit and the TypeScript client: each item answered in order as its commit alone would be;
 * replays inside a batch and across batches; an invalid item refused in its item; an item whose
 * outcome is unknown settled alone; a client that stops reading a large answer, after which the
 * same batch replays every item and the server lets its connection go; a lost batch reply
 * answered by sending the same batch again; coalescing of concurrent `commit` calls, counted at
 * the server, and split at the body limit. Every test ends with a verify of the audit history.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { FencegateClient } from '../../src/client/client.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import type { Store } from '../../src/store/store.js';
import { faultyStore, type FaultyStore } from '../../src/testing/faulty-store.js';
import type { CommitRequest, Grant } from '../../src/types.js';
import { FaultProxy } from '../client/fault-proxy.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

interface Fixture {
  store: Store;
  faults: FaultyStore;
  app: FastifyInstance;
  proxy: FaultProxy;
  /** The server's own address, and the proxy's in front of it. */
  url: string;
  proxyUrl: string;
  worker: string;
  otherTenant: string;
  client(options?: { coalesceCommits?: boolean; retries?: number }): FencegateClient;
  grant(scope: string): Promise<Grant>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `n` commits, each writing its own record at revision 0 of the grant's scope. */
function commits(grant: Grant, tag: string, n: number, value: unknown = { n: 1 }): CommitRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    scope: grant.scope,
    fence: grant.fence,
    operationId: `${tag}-${i}`,
    writes: [{ name: `${tag}-${i}`, expectRevision: 0, value }],
  }));
}

/** The connections the server holds open now. */
function connectionsOf(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.getConnections((error, count) => (error ? reject(error) : resolve(count)));
  });
}

/** The requests the proxy passed to one route. */
function requestsTo(proxy: FaultProxy, route: string): number {
  return proxy.log.filter((line) => line.split(' ')[1]?.split('?')[0] === route).length;
}

describe.each(AREA_STORES)('batched commits on $name', (kind) => {
  const stores = storesFor(kind, 'commit_batch');

  async function fixture(): Promise<Fixture> {
    const { store } = await stores.open({ groupCommit: true });
    const faults = faultyStore(store);
    const app = await buildServer({ store: faults, tokenCacheTtlMs: 0 });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const proxy = new FaultProxy(url);
    const proxyUrl = await proxy.start();
    const worker = (await issueToken(store, { tenant: 'acme', role: 'worker' })).token;
    const otherTenant = (await issueToken(store, { tenant: 'globex', role: 'worker' })).token;
    cleanups.push(async () => {
      try {
        expect((await verifyStore(store)).violations).toEqual([]);
      } finally {
        await proxy.stop();
        await app.close();
        await store.close();
      }
    });
    const client = (options: { coalesceCommits?: boolean; retries?: number } = {}) =>
      new FencegateClient({ url: proxyUrl, token: worker, ...options });
    return {
      store,
      faults,
      app,
      proxy,
      url,
      proxyUrl,
      worker,
      otherTenant,
      client,
      grant: (scope) => client().acquire({ scope, holder: 'w', ttlMs: 600_000 }),
    };
  }

  it('answers each item in order as its commit alone; a repeated operationId is a replay, in a batch and across batches', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/a');
    const [first, second] = commits(grant, 'a', 2);
    const stale = { ...commits(grant, 'stale', 1)[0]!, fence: grant.fence + 7 };
    const conflicting = { ...first!, writes: [{ name: 'other', expectRevision: 0, value: 2 }] };
    const invalid = { ...commits(grant, 'bad', 1)[0]!, operationId: '' };
    const batch = [first!, stale, first!, conflicting, invalid, second!];
    const response = await fetch(`${fx.url}/v1/commits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify({ commits: batch }),
    });
    expect(response.status).toBe(200);
    const { items } = (await response.json()) as {
      items: { status: number; body: Record<string, unknown> }[];
    };
    expect(items.map((item) => item.status)).toEqual([200, 409, 200, 422, 400, 200]);
    expect(items[0]!.body).toMatchObject({ outcome: 'committed', replayed: false });
    expect(items[1]!.body).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });
    // The same commit again in the batch: answered as a retry of the first, replayed.
    expect(items[2]!.body).toEqual({ ...items[0]!.body, replayed: true });
    expect(items[3]!.body).toMatchObject({ error: { code: 'operation_id_conflict' } });
    // Refused as its commit alone is, with the same field and message.
    const alone = await fetch(`${fx.url}/v1/commit`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify(invalid),
    });
    expect(alone.status).toBe(400);
    expect(items[4]!.body).toEqual(await alone.json());
    // Across batches: the stored outcomes, replayed; nothing applied twice.
    const again = await fx.client({ coalesceCommits: false }).commitMany([second!, stale]);
    expect(again).toMatchObject([
      { ok: true, result: { outcome: 'committed', replayed: true } },
      { ok: true, result: { outcome: 'rejected', replayed: true } },
    ]);
    expect((await fx.store.getRecord('acme', grant.scope, 'a-1')).revision).toBe(1);
    expect((await fx.store.getRecord('acme', grant.scope, 'other')).exists).toBe(false);
  });

  it('checks every item against the token: its tenant, and the grant a release needs', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/t');
    const [mine] = commits(grant, 't', 1);
    const releasing = { ...commits(grant, 'r', 1)[0]!, release: true as const };
    // Another tenant's worker names the scope of acme: in its own tenant there is no such scope.
    const other = new FencegateClient({ url: fx.url, token: fx.otherTenant });
    const answers = await other.commitMany([mine!, releasing]);
    expect(answers.map((a) => (a.ok ? a.result.outcome : a.error.code))).toEqual([
      'rejected',
      'rejected',
    ]);
    expect((await fx.store.getRecord('acme', grant.scope, 't-0')).exists).toBe(false);
    expect((await fx.store.getScope('acme', grant.scope))?.holder).toBe('w');
  });

  it('an item whose outcome is unknown is answered so in its item, and the client settles it alone', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/u');
    const batch = commits(grant, 'u', 3);
    // The store applies u-1, then its reply is lost: only that item is unknown.
    fx.faults.inject({
      method: 'commit',
      fault: 'lose-reply',
      when: (args) => (args[1] as { operationId?: string }).operationId === 'u-1',
    });
    const response = await fetch(`${fx.url}/v1/commits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.worker}`, 'content-type': 'application/json' },
      body: JSON.stringify({ commits: batch }),
    });
    const { items } = (await response.json()) as {
      items: { status: number; body: { error?: { code: string } } }[];
    };
    expect(items.map((item) => item.status)).toEqual([200, 503, 200]);
    expect(items[1]!.body.error?.code).toBe('outcome_unknown');
    // Through the client: the unknown item is sent again (in a batch of its own) and replays.
    fx.faults.inject({
      method: 'commit',
      fault: 'lose-reply',
      when: (args) => (args[1] as { operationId?: string }).operationId === 'v-1',
    });
    const answers = await fx.client().commitMany(commits(grant, 'v', 3));
    expect(answers).toMatchObject([
      { ok: true, result: { outcome: 'committed', replayed: false } },
      { ok: true, result: { outcome: 'committed', replayed: true } },
      { ok: true, result: { outcome: 'committed', replayed: false } },
    ]);
    expect(requestsTo(fx.proxy, '/v1/operations')).toBe(0);
  });

  it('after a lost batch reply the client sends the same batch again, not a lookup per commit', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/l');
    fx.proxy.inject('POST', '/v1/commits', 'drop-reply');
    const answers = await fx.client().commitMany(commits(grant, 'l', 5));
    // The lost attempt applied them all: the resend answers their stored outcomes.
    expect(
      answers.every((a) => a.ok && a.result.outcome === 'committed' && a.result.replayed),
    ).toBe(true);
    expect(requestsTo(fx.proxy, '/v1/commits')).toBe(2);
    expect(requestsTo(fx.proxy, '/v1/commit')).toBe(0);
    expect(fx.proxy.log.filter((line) => line.includes('/v1/operations'))).toEqual([]);
  });

  it('a client that stops reading mid-answer: every item was applied once, the same batch replays each, and its connection is let go', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/s');
    // An answer of hundreds of KiB: 60 commits of 48 records with long names, and 4 refused
    // for a stale fence (each answer names every record it wrote, with its revision).
    const batch = Array.from({ length: 64 }, (_, i) => ({
      scope: grant.scope,
      fence: i % 16 === 15 ? grant.fence + 7 : grant.fence,
      operationId: `s-${i}`,
      writes: Array.from({ length: 48 }, (_, k) => ({
        name: `s-${i}-${k}-`.padEnd(180, 'x'),
        expectRevision: 0,
        value: k,
      })),
    }));
    const body = JSON.stringify({ commits: batch });
    const { hostname, port } = new URL(fx.url);
    const server = fx.app.server;
    const before = await connectionsOf(server);
    const accepted: Socket[] = [];
    const onConnection = (socket: Socket) => accepted.push(socket);
    server.on('connection', onConnection);
    const raw = connect(Number(port), hostname);
    await once(raw, 'connect');
    const head = new Promise<Buffer>((resolve, reject) => {
      raw.once('data', (chunk: Buffer) => {
        // A few bytes of the answer, then no more: the rest is still on its way.
        raw.pause();
        resolve(chunk);
      });
      raw.once('error', reject);
    });
    raw.write(
      `POST /v1/commits HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${fx.worker}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const first = await head;
    raw.destroy();
    server.off('connection', onConnection);
    const text = first.toString('latin1');
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    const answerBytes = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(text)?.[1]);
    expect(answerBytes).toBeGreaterThan(512 * 1024);
    expect(first.length).toBeLessThan(answerBytes);
    // The server's end of that connection closes: no socket, and no answer buffered for it, stays.
    const serverSide = accepted.find((socket) => socket.remotePort === raw.localPort);
    expect(serverSide).toBeDefined();
    // Its 'error' (the client's reset) comes before 'close': wait for 'close' alone.
    if (!serverSide!.closed) await new Promise((resolve) => serverSide!.once('close', resolve));
    expect(await connectionsOf(server)).toBeLessThanOrEqual(before);
    // The same batch again: every item answers its first outcome, replayed, so the request the
    // client stopped reading was applied in full, once.
    const answers = await fx.client().commitMany(batch);
    answers.forEach((answer, i) => {
      const stale = i % 16 === 15;
      expect(answer).toMatchObject({
        ok: true,
        result: stale
          ? {
              outcome: 'rejected',
              operationId: `s-${i}`,
              replayed: true,
              error: { code: 'stale_fence' },
            }
          : { outcome: 'committed', operationId: `s-${i}`, replayed: true },
      });
      if (answer.ok && answer.result.outcome === 'committed') {
        expect(answer.result.records).toHaveLength(48);
        expect(answer.result.records.every((record) => record.revision === 1)).toBe(true);
      }
    });
    expect(
      (await fx.store.getRecord('acme', grant.scope, batch[63]!.writes[47]!.name)).exists,
    ).toBe(false);
    expect(
      (await fx.store.getRecord('acme', grant.scope, batch[62]!.writes[47]!.name)).revision,
    ).toBe(1);
    // Healthy for everyone else.
    expect((await fetch(`${fx.url}/healthz`)).status).toBe(200);
    const other = new FencegateClient({ url: fx.url, token: fx.otherTenant });
    const otherGrant = await other.acquire({ scope: 'batch/s-other', holder: 'w', ttlMs: 600_000 });
    expect(await other.commit(commits(otherGrant, 'so', 1)[0]!)).toMatchObject({
      outcome: 'committed',
    });
  });

  it('coalesces concurrent commits of one client into one request, each caller answered on its own', async () => {
    const fx = await fixture();
    const grant = await fx.grant('batch/c');
    const client = fx.client();
    const batch = commits(grant, 'c', 12);
    batch[3] = { ...batch[3]!, fence: grant.fence + 1 };
    const settled = await Promise.allSettled([
      ...batch.map((request) => client.commit(request)),
      client.commit({
        ...batch[0]!,
        operationId: 'c-bad',
        writes: [{ name: '', value: 1 }],
      } as never),
    ]);
    expect(requestsTo(fx.proxy, '/v1/commits')).toBe(1);
    expect(requestsTo(fx.proxy, '/v1/commit')).toBe(0);
    const outcomes = settled.map((s) =>
      s.status === 'fulfilled' ? s.value.outcome : (s.reason as { code: string }).code,
    );
    expect(outcomes.filter((o) => o === 'committed')).toHaveLength(11);
    expect(outcomes[3]).toBe('rejected');
    expect(outcomes[12]).toBe('invalid_request');
    // Off: one request per commit.
    const alone = fx.client({ coalesceCommits: false });
    await Promise.all(commits(grant, 'd', 3).map((request) => alone.commit(request)));
    expect(requestsTo(fx.proxy, '/v1/commit')).toBe(3);
  });
});

describe('batched commits and the body limit', () => {
  const stores = storesFor(AREA_STORES[0]!, 'commit_batch_split');

  it('splits a coalesced batch to stay under 1 MiB; a batch the server refuses whole goes commit by commit', async () => {
    const { store } = await stores.open({ groupCommit: true });
    const app = await buildServer({ store });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const proxy = new FaultProxy(url);
    const proxyUrl = await proxy.start();
    cleanups.push(async () => {
      await proxy.stop();
      await app.close();
      await store.close();
    });
    const token = (await issueToken(store, { tenant: 'acme', role: 'worker' })).token;
    const client = new FencegateClient({ url: proxyUrl, token });
    const grant = await client.acquire({ scope: 'split', holder: 'w', ttlMs: 600_000 });
    // Ten values of 200 KiB: five fit one body of 1 MiB, so two requests.
    const value = 'x'.repeat(200 * 1024);
    const results = await Promise.all(
      commits(grant, 'big', 10, value).map((request) => client.commit(request)),
    );
    expect(results.every((r) => r.outcome === 'committed')).toBe(true);
    expect(requestsTo(proxy, '/v1/commits')).toBe(2);
    // An integer no JavaScript number holds makes the whole body invalid: nothing applied, and
    // each commit is sent alone so that only its own caller is refused.
    const [good, bad] = commits(grant, 'exact', 2);
    const settled = await Promise.allSettled([
      client.commit(good!),
      client.commit({ ...bad!, writes: [{ name: 'exact-1', expectRevision: 0, value: 2 ** 60 }] }),
    ]);
    expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { outcome: 'committed' } });
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: 'invalid_request' } });
    expect(requestsTo(proxy, '/v1/commits')).toBe(3);
    expect(requestsTo(proxy, '/v1/commit')).toBe(2);
  });
});
