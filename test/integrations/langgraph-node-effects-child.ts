/**
 * One run of the node-effect graph in a process of its own, on a SQLite file the test process
 * shares: `tsx langgraph-node-effects-child.ts <json options>`. It claims the thread, prints
 * `staged <effect key>` once `act` has staged its effect, and then works until a line `go` comes
 * on stdin (the test kills it, or freezes it and takes the thread meanwhile); then `act` stages
 * `late` as well. Last it prints one JSON line: the run's steps, or the code it ended with.
 */
import { createInterface } from 'node:readline';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { buildEffectGraph } from './langgraph-effects-fixture.js';

interface ChildOptions {
  store: string;
  thread: string;
  durability: 'sync' | 'async' | 'exit';
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const gate = await Fencegate.open({ store: options.store });
const saver = new FencedCheckpointSaver({ gate, holder: 'child' });
const owner = await saver.claimWriteOwnership(options.thread);
const input = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const graph = buildEffectGraph(owner, 'child', [], {
  stageLate: true,
  hold: async (effectKey) => {
    console.log(`staged ${effectKey}`);
    await input.next();
  },
});
try {
  const state = await graph.invoke(
    { steps: ['input'] },
    { configurable: { thread_id: options.thread }, durability: options.durability },
  );
  console.log(JSON.stringify({ steps: state.steps }));
} catch (error) {
  console.log(JSON.stringify({ error: isFencegateError(error) ? error.code : String(error) }));
} finally {
  await saver.close().catch(() => undefined);
  await gate.close();
  process.exit(0);
}
