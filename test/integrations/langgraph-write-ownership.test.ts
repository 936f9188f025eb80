/**
 * The write-ownership suite of fencegate/testing/vitest, run on FencedCheckpointSaver in process
 * on each store (SQLite, PostgreSQL, etcd) and over HTTP (with a worker token whose take-over right covers `langgraph/`): every
 * clause holds. And on LangGraph's own MemorySaver and @langchain/langgraph-checkpoint-sqlite's
 * SqliteSaver, given a claim that only records the owner: the clauses each fails are listed as
 * expected failures, so this file states the measured result and notices any change to it.
 */
import { randomUUID } from 'node:crypto';
import { MemorySaver, type BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { buildServer } from '../../src/server/build-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import {
  validateWriteOwnership,
  type WriteOwnershipCheckpointer,
  type WriteOwnershipClause,
} from '../../src/testing/vitest/index.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

/** Without a fence, a claim can only note who claimed last; the writer is the saver itself. */
function withRecordedClaim<T extends BaseCheckpointSaver>(
  saver: T,
): T & WriteOwnershipCheckpointer {
  const owners = new Map<string, string>();
  return Object.assign(saver, {
    claimWriteOwnership(threadId: string) {
      owners.set(threadId, randomUUID());
      return Promise.resolve(saver);
    },
  });
}

/**
 * As measured: every clause about a superseded writer. An unfenced saver takes the superseded
 * writer's put and putWrites like any other and answers normally, so that writer never learns it
 * lost the thread; the other seven clauses hold.
 */
const UNFENCED_FAILURES: WriteOwnershipClause[] = [
  'superseded_owner_put_is_rejected',
  'superseded_owner_put_is_not_durable',
  'superseded_owner_cannot_fork_the_chain',
  'superseded_owner_put_writes_is_rejected',
  'superseded_owner_put_writes_is_not_durable',
  'superseded_owner_cannot_displace_the_current_owners_write',
  'superseded_owner_cannot_displace_a_special_channel_write',
  'superseded_owner_stays_superseded',
];

for (const kind of AREA_STORES) {
  const stores = storesFor(kind, 'langgraph_write_ownership');
  let gate: Fencegate;
  validateWriteOwnership<FencedCheckpointSaver>({
    checkpointerName: `FencedCheckpointSaver in process on ${kind.name}`,
    async beforeAll() {
      gate = await Fencegate.open({ store: (await stores.open()).store });
    },
    createCheckpointer: () => new FencedCheckpointSaver({ gate }),
    async destroyCheckpointer(saver) {
      await saver.close();
      expect((await gate.verify()).violations).toEqual([]);
      await gate.close();
    },
  });
}

let app: FastifyInstance;
let store: SqliteStore;
let operator: FencegateClient;
validateWriteOwnership<FencedCheckpointSaver>({
  checkpointerName: 'FencedCheckpointSaver over HTTP with a worker token that may take over',
  async beforeAll() {
    store = SqliteStore.open({ path: ':memory:' });
    app = await buildServer({ store });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const token = async (role: 'worker' | 'operator', mayTakeOver?: string[]) =>
      (await issueToken(store, { tenant: 'acme', role, mayTakeOver })).token;
    operator = new FencegateClient({ url, token: await token('operator') });
    const worker = new FencegateClient({ url, token: await token('worker', ['langgraph/']) });
    saverOverHttp = new FencedCheckpointSaver({ gate: worker });
  },
  createCheckpointer: () => saverOverHttp,
  async destroyCheckpointer(saver) {
    await saver.close();
    expect((await operator.verify()).violations).toEqual([]);
    await app.close();
    await store.close();
  },
});
let saverOverHttp: FencedCheckpointSaver;

validateWriteOwnership({
  checkpointerName: 'MemorySaver with a claim that only records the owner',
  createCheckpointer: () => withRecordedClaim(new MemorySaver()),
  expectedFailures: UNFENCED_FAILURES,
});

validateWriteOwnership({
  checkpointerName: 'SqliteSaver with a claim that only records the owner',
  createCheckpointer: () => withRecordedClaim(SqliteSaver.fromConnString(':memory:')),
  expectedFailures: UNFENCED_FAILURES,
});
