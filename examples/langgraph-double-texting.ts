/**
 * Two messages on one thread: a user writes again while the agent still answers the first
 * message. runThread decides what the second message does, by its multitaskStrategy:
 *
 *   reject     refused at once (ThreadBusyError), the first run goes on
 *   enqueue    waits until the first run ended, then runs on its result
 *   interrupt  the first run is stopped; the second continues from its last checkpoint
 *   rollback   the first run is stopped and undone; the second starts where the first started
 *
 *   npx tsx examples/langgraph-double-texting.ts
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Fencegate, isFencegateError } from 'fencegate';
import {
  FencedCheckpointSaver,
  isThreadBusyError,
  runThread,
  type MultitaskStrategy,
} from 'fencegate/langgraph';

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const saver = new FencedCheckpointSaver({ gate, holder: 'support-agent' });
const State = Annotation.Root({
  notes: Annotation<string[]>({ reducer: (done, next) => done.concat(next), default: () => [] }),
});

/** Keeps the first message's run inside its tool call until the story lets it return. */
let toolCalled: () => void = () => undefined;
let toolReturns: () => void = () => undefined;

const agent = new StateGraph(State)
  .addNode('read', (state) => ({ notes: [`read "${state.notes.at(-1)}"`] }))
  .addNode('tool', async (_state, config) => {
    if (config.configurable?.slow === true) {
      toolCalled();
      await new Promise<void>((resolve) => (toolReturns = resolve));
    }
    return { notes: ['looked it up'] };
  })
  .addNode('answer', () => ({ notes: ['answered'] }))
  .addEdge(START, 'read')
  .addEdge('read', 'tool')
  .addEdge('tool', 'answer')
  .addEdge('answer', END)
  .compile({ checkpointer: saver });

function send(thread: string, message: string, strategy: MultitaskStrategy, slow = false) {
  return runThread(agent, {
    gate,
    threadId: thread,
    input: { notes: [message] },
    config: { configurable: { slow }, durability: 'sync' },
    multitaskStrategy: strategy,
  });
}

/** Sends the first message and waits until its run is inside the slow tool call. */
async function firstMessageInTool(thread: string) {
  const inTool = new Promise<void>((resolve) => (toolCalled = resolve));
  const first = send(thread, 'where is my order?', 'reject', true);
  first.catch(() => undefined);
  await inTool;
  return { first };
}

for (const strategy of ['reject', 'enqueue', 'interrupt', 'rollback'] as const) {
  const thread = `chat-${strategy}`;
  if (strategy === 'rollback') await send(thread, 'hello', 'reject');
  const { first } = await firstMessageInTool(thread);
  const second = send(thread, 'it is order 1234', strategy);
  if (strategy === 'reject') {
    const refusal = await second.catch((error: unknown) => error);
    const refused = isThreadBusyError(refusal) ? `ThreadBusyError (${refusal.code})` : refusal;
    console.log(`${strategy}: the second message is refused:`, refused);
    toolReturns();
  } else if (strategy === 'enqueue') {
    toolReturns(); // the first run ends; the second, waiting in line, runs next
  } else {
    await second; // the second run took the thread over and has finished
    toolReturns();
  }
  const firstOutcome = await first.then(
    (state) => `finished: ${state.notes.join(' / ')}`,
    (error: unknown) => `stopped: ${isFencegateError(error) ? error.code : String(error)}`,
  );
  console.log(`${strategy}: first message ${firstOutcome}`);
  const stops = strategy === 'interrupt' || strategy === 'rollback';
  if (firstOutcome.startsWith('stopped') !== stops) throw new Error(`${strategy}: unexpected`);
  if (strategy !== 'reject') {
    console.log(`${strategy}: second message finished: ${(await second).notes.join(' / ')}`);
  }
}

const report = await gate.verify();
console.log('verify:', report.ok ? 'no violations' : report.violations);
if (!report.ok) process.exitCode = 1;
await saver.close();
await gate.close();
