/**
 * Two replicas of a LangGraph agent on one thread, each a worker of a fencegate server. Replica A
 * claims the thread and its run hangs in a model call; replica B claims the thread (a takeover: its
 * worker token was created with the take-over right for `langgraph/`) and finishes the run. When
 * A wakes, its next checkpoint is refused with StaleWriteOwnerError and nothing of it is stored.
 *
 *   npx tsx examples/langgraph-write-ownership.ts
 */
import { randomBytes } from 'node:crypto';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { Fencegate } from 'fencegate';
import { FencegateAdminClient, FencegateClient } from 'fencegate/client';
import { FencedCheckpointSaver, isStaleWriteOwnerError } from 'fencegate/langgraph';
import { buildServer } from 'fencegate/server';

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const adminToken = randomBytes(32).toString('base64url');
const server = await buildServer({ store: gate.store, adminToken });
const url = await server.listen({ host: '127.0.0.1', port: 0 });

// A worker token that may also take over the thread scopes (fencegate token create … --may-take-over).
const admin = new FencegateAdminClient({ url, adminToken });
const { token } = await admin.createToken({
  tenant: 'acme',
  role: 'worker',
  mayTakeOver: ['langgraph/'],
});
const replica = () => new FencedCheckpointSaver({ gate: new FencegateClient({ url, token }) });

const State = Annotation.Root({
  notes: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
});
let wake: () => void = () => undefined;
const asleep = new Promise<void>((resolve) => (wake = resolve));
let hung: () => void = () => undefined;
const hanging = new Promise<void>((resolve) => (hung = resolve));

/** look up → draft a reply; replica A's draft hangs (a model call that never answers). */
function agent(checkpointer: BaseCheckpointSaver, name: string) {
  const draft = async () => {
    if (name === 'replica A') {
      hung();
      await asleep;
    }
    return { notes: [`reply drafted by ${name}`] };
  };
  return new StateGraph(State)
    .addNode('lookUp', () => ({ notes: [`order looked up by ${name}`] }))
    .addNode('draft', draft)
    .addEdge(START, 'lookUp')
    .addEdge('lookUp', 'draft')
    .addEdge('draft', END)
    .compile({ checkpointer });
}

const thread = { configurable: { thread_id: 'support-ticket-42' }, durability: 'sync' as const };
const replicaA = replica();
const replicaB = replica();

const ownerA = await replicaA.claimWriteOwnership('support-ticket-42');
console.log(`replica A owns the thread under fence ${ownerA.fence}; its draft hangs`);
const runA = agent(ownerA, 'replica A').invoke({ notes: ['question'] }, thread);
await hanging;

const ownerB = await replicaB.claimWriteOwnership('support-ticket-42');
console.log(`replica B took the thread over: fence ${ownerB.fence}`);
const answer = await agent(ownerB, 'replica B').invoke(null, thread);
console.log('replica B answered:', answer.notes.join(' → '));

wake();
try {
  await runA;
  throw new Error('the superseded run should have been refused');
} catch (error) {
  if (!isStaleWriteOwnerError(error)) throw error;
  console.log(`replica A woke and was refused: ${error.code}, isStaleWriteOwnerError`);
}
const state = await agent(replicaB, 'reader').getState(thread);
console.log('the thread holds:', (state.values as { notes: string[] }).notes.join(' → '));

await replicaA.close();
await replicaB.close();
await server.close();
const report = await gate.verify();
console.log(`verify: ${report.violations.length} violations`);
await gate.close();
