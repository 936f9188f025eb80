/**
 * Long-term memory that loses no write: two parallel nodes of one graph add a fact to the same
 * memory item. Each reads the item and puts it back at the revision it read; the second put is
 * refused with MemoryConflictError, re-reads, and lands on top of the first. Then an operator
 * hands the thread to a new run, and the superseded run's memory write is refused.
 *
 *   npx tsx examples/langgraph-memory.ts
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Fencegate } from 'fencegate';
import {
  FencedCheckpointSaver,
  FencedStore,
  isMemoryConflictError,
  isStaleWriteOwnerError,
} from 'fencegate/langgraph';

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const saver = new FencedCheckpointSaver({ gate });
const memory = new FencedStore({ saver });
const thread = 'customer-7';
const profile = ['customer', 'profile'];

/** Adds `fact` to the profile's facts; on a conflict, decides again on the value now stored. */
function learn(fact: string) {
  return async () => {
    for (;;) {
      const item = await memory.get(profile, 'facts');
      const facts = [...((item?.value.facts as string[] | undefined) ?? []), fact];
      await bothRead(); // both nodes have read before either writes: the race, every time
      try {
        await memory.put(profile, 'facts', { facts }, { ifRevision: item?.revision ?? 0 });
        return { log: [`${fact}: stored`] };
      } catch (error) {
        if (!isMemoryConflictError(error)) throw error;
        console.log(`${fact}: conflict at revision ${error.current?.revision}, retrying`);
      }
    }
  };
}

let readers = 0;
let release: () => void = () => undefined;
const gateOpen = new Promise<void>((resolve) => (release = resolve));
async function bothRead(): Promise<void> {
  readers += 1;
  if (readers === 2) release();
  await gateOpen;
}

const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});
const graph = new StateGraph(State)
  .addNode('billing', learn('pays yearly'))
  .addNode('support', learn('prefers email'))
  .addEdge(START, 'billing')
  .addEdge(START, 'support')
  .addEdge('billing', END)
  .addEdge('support', END)
  .compile({ checkpointer: saver, store: memory });

await graph.invoke({ log: [] }, { configurable: { thread_id: thread } });
const stored = await memory.forThread(thread).get(profile, 'facts');
console.log(`facts: ${JSON.stringify(stored?.value.facts)} (revision ${stored?.revision})`);

// An operator hands the thread to a new run; the old run's memory write is refused.
const oldRun = memory.forThread(thread);
await gate.takeover(saver.scopeFor(thread), { holder: 'run-2' });
try {
  await oldRun.put(profile, 'facts', { facts: ['written by the superseded run'] });
  console.log('superseded run wrote memory (unexpected)');
} catch (error) {
  if (!isStaleWriteOwnerError(error)) throw error;
  console.log(`superseded run refused: ${error.code}`);
}
const after = await memory.forThread(thread).get(profile, 'facts');
console.log(`facts still: ${JSON.stringify(after?.value.facts)}`);
await gate.close();
