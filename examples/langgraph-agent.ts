/**
 * A LangGraph agent whose run is superseded mid-run: an operator takes its thread over (the run
 * looked stuck). The old run's next checkpoint is refused `stale_fence` and its invoke rejects;
 * the new run continues from the last checkpoint the old one committed.
 *
 *   npx tsx examples/langgraph-agent.ts
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Fencegate, isFencegateError } from 'fencegate';
import { FencedCheckpointSaver } from 'fencegate/langgraph';

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const State = Annotation.Root({
  notes: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
});

let unfreeze: () => void = () => undefined;
const frozen = new Promise<void>((resolve) => (unfreeze = resolve));
let reachedTool: () => void = () => undefined;
const inTool = new Promise<void>((resolve) => (reachedTool = resolve));

function agent(saver: FencedCheckpointSaver, run: string) {
  return new StateGraph(State)
    .addNode('research', () => ({ notes: [`research by ${run}`] }))
    .addNode('tool', async () => {
      if (run === 'run-1') {
        reachedTool();
        await frozen; // the tool call hangs
      }
      return { notes: [`tool result by ${run}`] };
    })
    .addNode('answer', () => ({ notes: [`answer by ${run}`] }))
    .addEdge(START, 'research')
    .addEdge('research', 'tool')
    .addEdge('tool', 'answer')
    .addEdge('answer', END)
    .compile({ checkpointer: saver });
}

const thread = 'support-ticket-42';
// Run 1 brings no fence: its saver acquires the thread on the first checkpoint and renews it.
const first = new FencedCheckpointSaver({ gate, holder: 'agent-run-1' });
const run1 = agent(first, 'run-1').invoke(
  { notes: ['question'] },
  { configurable: { thread_id: thread }, durability: 'sync' },
);
await inTool;

// The operator decides run 1 is stuck and hands the thread to a new run.
const grant = await gate.takeover(first.scopeFor(thread), { holder: 'agent-run-2' });
unfreeze();
try {
  await run1;
  console.log('run 1 finished (unexpected)');
} catch (error) {
  if (!isFencegateError(error)) throw error;
  console.log(`run 1 stopped: ${error.code} (${error.message})`);
}

// Run 2 carries the takeover's fence and resumes from the last committed checkpoint.
const second = new FencedCheckpointSaver({ gate, holder: 'agent-run-2' });
const result = await agent(second, 'run-2').invoke(null, {
  configurable: { thread_id: thread, fence: grant.fence },
  durability: 'sync',
});
console.log('thread state:', JSON.stringify(result.notes));
console.log('verify:', (await gate.verify()).ok ? 'no violations' : 'VIOLATIONS');
await first.close();
await second.close();
await gate.close();
