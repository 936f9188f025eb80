/**
 * One run of the double-texting graph in a process of its own, on a SQLite file the test process
 * shares: `tsx langgraph-double-texting-child.ts <json options>`. It prints `open` once it has
 * loaded and opened the store, before its run starts. With `hold`, its `act` prints `in act` and
 * works until its run's signal aborts, as a node that heeds the signal does. Last it prints one
 * JSON line: the run's steps, or the code of the error it ended with and whether its signal had
 * aborted.
 */
import { Fencegate } from '../../src/gate.js';
import { isFencegateError } from '../../src/errors.js';
import {
  FencedCheckpointSaver,
  runThread,
  type MultitaskStrategy,
} from '../../src/integrations/langgraph/index.js';
import { aborted, buildGraph, type RunHooks } from './langgraph-double-texting-graph.js';

interface ChildOptions {
  store: string;
  thread: string;
  run: string;
  message: string;
  durability: 'sync' | 'async' | 'exit';
  strategy: MultitaskStrategy;
  ttlMs: number;
  hold: boolean;
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const gate = await Fencegate.open({ store: options.store });
const saver = new FencedCheckpointSaver({ gate, holder: `${options.run}-saver` });
console.log('open');
let signal: AbortSignal | undefined;
const hooks: RunHooks = options.hold
  ? {
      hold: async (runSignal) => {
        signal = runSignal;
        console.log('in act');
        // The node's work keeps the process alive (the lease's renewal timer does not).
        const working = setInterval(() => undefined, 1_000);
        await aborted(runSignal);
        clearInterval(working);
      },
    }
  : {};
try {
  const result = await runThread(buildGraph(saver, options.run, hooks), {
    gate,
    threadId: options.thread,
    input: { steps: [options.message] },
    config: { durability: options.durability },
    multitaskStrategy: options.strategy,
    holder: options.run,
    ttlMs: options.ttlMs,
    pollMs: 20,
  });
  console.log(JSON.stringify({ steps: result.steps }));
} catch (error) {
  const code = isFencegateError(error) ? error.code : String(error);
  console.log(JSON.stringify({ error: code, signalAborted: signal?.aborted ?? false }));
} finally {
  await saver.close();
  await gate.close();
  process.exit(0);
}
