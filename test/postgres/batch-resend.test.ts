/**
 * A batch whose connection breaks between its statements: the group commit's work runs again on
 * another connection (a statement pg never sent may go again), and each operation is planned,
 * applied and answered once, as that last run found it. Here an operation that reads a range
 * before its plan is made has that read cut off, which leaves the connection broken, so the
 * batch's apply is never sent and the batch runs again.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { planAcquire } from '../../src/core/plan/plan-leases.js';
import { planCancel } from '../../src/core/plan/plan-scope-cancel.js';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresBatcher } from '../../src/store/postgres/postgres-batcher.js';
import { PostgresConnection } from '../../src/store/postgres/postgres-connection.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { RowCache } from '../../src/store/postgres/postgres-snapshot.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { parsePostgresUrl } from '../../src/store/postgres/postgres-url.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { TcpProxy } from './tcp-proxy.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const TENANT = 'default';
const schema = testSchema('batch_resend');
const clock = new ManualClock();
let proxy: TcpProxy;
/** The truth, through a store of its own that does not go through the proxy. */
let direct: Fencegate;

beforeAll(async () => {
  if (noPostgres) return;
  direct = await Fencegate.open({
    store: await PostgresStore.open({ url: pgUrl(), schema, clock }),
  });
  const target = new URL(pgUrl());
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
});

afterAll(async () => {
  if (noPostgres) return;
  await direct.close();
  await proxy.stop();
  await dropSchema(pgUrl(), schema);
});

/** A batcher with one batch in flight, on a pool of one connection through the proxy. */
function proxiedBatcher(): { batcher: PostgresBatcher; connection: PostgresConnection } {
  const url = new URL(pgUrl());
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const { connectionString, target } = parsePostgresUrl(url.toString());
  const connection = new PostgresConnection(connectionString, target, { max: 1 });
  const engine = new PostgresEngine(connection, schema, new RowCache(), clock);
  return { batcher: new PostgresBatcher(engine, target, 1), connection };
}

/** The answer, or the code of the error it was refused with. */
async function answerOf(answer: Promise<unknown>): Promise<unknown> {
  return answer.catch((error: unknown) => (isFencegateError(error) ? error.code : String(error)));
}

async function auditCount(scope: string, kind: 'acquire' | 'cancel'): Promise<number> {
  return (await direct.audit({ scope, kind })).items.length;
}

it.skipIf(noPostgres)(
  'a batch whose apply was never sent runs again on another connection; each operation is answered once, as applied',
  async () => {
    const { batcher, connection } = proxiedBatcher();
    try {
      // The pool's one connection is held, so the first operation's batch waits for it and the
      // next two queue as one batch behind it. The first one's row is then known to the batcher,
      // so the cancel plans on it at once.
      const held = await connection.pool.connect();
      const acquire = (scope: string) =>
        batcher.submit(TENANT, (s) => planAcquire(s, { scope, holder: 'b', ttlMs: 600_000 }));
      const first = acquire('cancelled');
      const cancel = batcher.submit(TENANT, (s) => planCancel(s, 'cancelled', 'test'));
      const member = acquire('member');
      // The cancel reads the scope's intents before it plans: that read's connection breaks.
      const cut = proxy.cutAfterNextReply('load_ranges');
      held.release();

      expect(await answerOf(first)).toMatchObject({ fence: 1 });
      await cut;
      // What each caller was told, next to what the store holds.
      expect({
        cancel: await answerOf(cancel),
        cancelsStored: await auditCount('cancelled', 'cancel'),
        member: await answerOf(member),
        grantsStored: await auditCount('member', 'acquire'),
      }).toEqual({
        cancel: { fence: 2, cancelledIntents: 0, nextCursor: null },
        cancelsStored: 1,
        member: expect.objectContaining({ fence: 1 }) as unknown,
        grantsStored: 1,
      });
    } finally {
      await connection.close();
    }
    expect(await direct.getScope('cancelled')).toMatchObject({ fence: 2, holder: null });
  },
);
