/**
 * Connection faults between the store and PostgreSQL, through a loopback proxy the test controls:
 * a statement that cannot be sent is store_unavailable and changes nothing; a commit whose reply is
 * lost after the server committed is outcome_unknown, getOperation then reads it as committed, and
 * a retry with the same operationId is answered as replayed with the write applied once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isFencegateError, type ErrorCode } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitRequest } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { TcpProxy } from './tcp-proxy.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('faults');
const clock = new ManualClock();
let proxy: TcpProxy;
let proxied: PostgresStore;
let viaProxy: Fencegate;
/** A second handle that does not go through the proxy: the truth. */
let direct: Fencegate;

beforeAll(async () => {
  const url = pgUrl();
  const target = new URL(url);
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  target.hostname = '127.0.0.1';
  target.port = String(proxy.port);
  // One connection, so the statement under test travels on the connection the test just used.
  proxied = await PostgresStore.open({
    url: target.toString(),
    schema,
    clock,
    pool: { max: 1, connectionTimeoutMillis: 2_000 },
  });
  viaProxy = await Fencegate.open({ store: proxied });
  direct = await Fencegate.open({ store: await PostgresStore.open({ url, schema, clock }) });
});

afterAll(async () => {
  await viaProxy.close();
  await direct.close();
  await proxy.stop();
  await dropSchema(pgUrl(), schema);
});

beforeEach(async () => {
  // Every case starts with the proxy up and one live pooled connection.
  await proxy.stop();
  await proxy.start();
  await until(
    () => proxied.poolStats().total === 0,
    'the pool to drop connections of the old proxy',
  );
  await viaProxy.getScope('warm-up');
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function failsWith(call: Promise<unknown>, code: ErrorCode): Promise<Error> {
  try {
    await call;
  } catch (error) {
    expect(isFencegateError(error) ? error.code : error).toBe(code);
    return error as Error;
  }
  throw new Error(`expected ${code}`);
}

let n = 0;
async function prepared(): Promise<CommitRequest> {
  n += 1;
  const scope = `faults/${n}`;
  const grant = await viaProxy.acquire({ scope, holder: 'w', ttlMs: 60_000 });
  await viaProxy.getRecord(scope, 'memory');
  return {
    scope,
    fence: grant.fence,
    operationId: `faults-op-${n}`,
    writes: [{ name: 'memory', expectRevision: 0, value: { summary: 'compacted' } }],
    intents: [{ effectKey: `faults-effect-${n}`, target: 'hook', payload: { n } }],
  };
}

async function auditOf(operationId: string) {
  return (await direct.audit({ kind: 'commit', limit: 1000 })).items.filter(
    (e) => e.operationId === operationId,
  );
}

describe.skipIf(noPostgres)('connection cut before the commit is sent', () => {
  it('answers store_unavailable and nothing changes; the same operationId commits later', async () => {
    const request = await prepared();
    await proxy.stop();
    await until(() => proxied.poolStats().total === 0, 'the pool to notice the closed connection');

    await failsWith(viaProxy.commit(request), 'store_unavailable');
    await failsWith(viaProxy.getRecord(request.scope, 'memory'), 'store_unavailable');
    await failsWith(
      viaProxy.renew({ scope: request.scope, holder: 'w', fence: request.fence, ttlMs: 1000 }),
      'store_unavailable',
    );

    expect(await direct.getOperation(request.operationId)).toBeNull();
    expect((await direct.getRecord(request.scope, 'memory')).revision).toBe(0);
    expect(await direct.getIntent(`faults-effect-${n}`)).toBeNull();
    expect(await auditOf(request.operationId)).toEqual([]);

    await proxy.start();
    const result = await viaProxy.commit(request);
    expect(result).toMatchObject({ outcome: 'committed', replayed: false });
  });

  it('never shows the password of the URL', async () => {
    const target = new URL(pgUrl());
    target.hostname = '127.0.0.1';
    target.port = String(proxy.port);
    target.password = 'pw-never-shown';
    const store = await PostgresStore.open({
      url: target.toString(),
      schema,
      pool: { max: 1 },
    }).catch((error: unknown) => error);
    // Trust auth accepts any password; the point is what the failure says once the link is down.
    if (store instanceof PostgresStore) {
      await proxy.stop();
      await until(() => store.poolStats().total === 0, 'the pool to notice');
      const error = await failsWith(store.getScope('default', 'x'), 'store_unavailable');
      expect(error.message).not.toContain('pw-never-shown');
      expect(JSON.stringify(error)).not.toContain('pw-never-shown');
      await store.close();
    } else {
      expect(String(store)).not.toContain('pw-never-shown');
    }
  });
});

describe.skipIf(noPostgres)('connection cut after PostgreSQL committed, before the reply', () => {
  it('answers outcome_unknown; getOperation says committed; a retry is replayed; applied once', async () => {
    const request = await prepared();
    const cut = proxy.cutAfterNextReply();
    const error = await failsWith(viaProxy.commit(request), 'outcome_unknown');
    expect(error).toMatchObject({ details: { operationId: request.operationId }, retryable: true });
    await cut;

    const stored = await viaProxy.getOperation(request.operationId);
    expect(stored).toMatchObject({
      outcome: 'committed',
      replayed: false,
      records: [{ name: 'memory', revision: 1 }],
    });
    const retried = await viaProxy.commit(request);
    expect(retried).toEqual({ ...stored, replayed: true });

    const record = await direct.getRecord(request.scope, 'memory');
    expect(record).toMatchObject({ revision: 1, value: { summary: 'compacted' } });
    expect(await auditOf(request.operationId)).toHaveLength(1);
    expect((await direct.listIntents({ scope: request.scope })).items).toHaveLength(1);
  });

  it('a lease operation whose reply is lost is outcome_unknown too; a read whose reply is lost is store_unavailable', async () => {
    const request = await prepared();
    let cut = proxy.cutAfterNextReply();
    await failsWith(viaProxy.takeover(request.scope, { holder: 'operator' }), 'outcome_unknown');
    await cut;
    expect((await direct.getScope(request.scope))?.fence).toBe(request.fence + 1);

    await viaProxy.getScope(request.scope);
    cut = proxy.cutAfterNextReply();
    await failsWith(viaProxy.getScope(request.scope), 'store_unavailable');
    await cut;
  });
});
