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
import { expect } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import {
  validateWriteOwnership,
  type WriteOwnershipCheckpointer,
  type WriteOwnershipClause,
} from '../../src/testing/vitest/index.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { startHttpTenant, type HttpTenant } from './langgraph-http-tenant.js';

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

let http: HttpTenant;
validateWriteOwnership<FencedCheckpointSaver>({
  checkpointerName: 'FencedCheckpointSaver over HTTP with a worker token that may take over',
  async beforeAll() {
    http = await startHttpTenant();
  },
  createCheckpointer: () => new FencedCheckpointSaver({ gate: http.worker }),
  async destroyCheckpointer(saver) {
    await saver.close();
    await http.close();
  },
});

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
