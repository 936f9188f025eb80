/**
 * LangGraph.js benchmark: one 3-node graph (each node one step) run on three checkpointers in one
 * run, every run on the same thread, durability `sync` (each step's checkpoint is stored before the
 * next step starts, so a step's time includes its write):
 *
 *  - MemorySaver, LangGraph's in-memory saver (the baseline);
 *  - FencedCheckpointSaver in process, a Fencegate on a SQLite file with its defaults;
 *  - FencedCheckpointSaver over HTTP: a fencegate server on such a file in this process, the
 *    saver through FencegateClient with a worker token.
 *
 * A step's time is the gap between two updates of `graph.stream`; steps/s counts whole runs.
 * Then, in process, two answers of runThread to a second message on a busy thread: how long a
 * `reject` takes to refuse, and how long an `interrupt` takes to stop the old run (from calling
 * runThread until the old run's invoke rejects; the old run loops over a 1 ms step).
 *
 *   npm run bench -- langgraph [--seconds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { FencegateClient } from '../src/client/index.js';
import { Fencegate } from '../src/gate.js';
import { FencedCheckpointSaver, runThread } from '../src/integrations/langgraph/index.js';
import { buildServer } from '../src/server/build-server.js';
import { issueToken } from '../src/server/tokens.js';
import { summarize, type RunStats } from './stats.js';

const State = Annotation.Root({
  n: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
});

export interface LanggraphBenchOptions {
  seconds?: number;
  /** Repetitions of each multitask answer. */
  answers?: number;
}

export interface SaverFigures {
  saver: string;
  stepsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LanggraphBenchResult {
  savers: SaverFigures[];
  /** In process: the fenced p50 per step minus MemorySaver's (target ≤ 2 ms). */
  addedP50Ms: number;
  rejectMs: { p50: number; p99: number };
  interruptStopMs: { p50: number; p99: number };
}

function threeSteps(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode('plan', (state) => ({ n: state.n + 1 }))
    .addNode('act', (state) => ({ n: state.n + 1 }))
    .addNode('report', (state) => ({ n: state.n + 1 }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'report')
    .addEdge('report', END)
    .compile({ checkpointer });
}

/** Runs the graph on one thread for `seconds`; times every step. */
async function measureSteps(checkpointer: BaseCheckpointSaver, seconds: number) {
  const graph = threeSteps(checkpointer);
  const config = { configurable: { thread_id: 'bench' }, durability: 'sync' as const };
  const steps: number[] = [];
  const run = async () => {
    let last = process.hrtime.bigint();
    for await (const _update of await graph.stream(
      { n: 0 },
      { ...config, streamMode: 'updates' },
    )) {
      const now = process.hrtime.bigint();
      steps.push(Number(now - last));
      last = now;
    }
  };
  for (let i = 0; i < 20; i++) await run(); // warm-up
  steps.length = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() < end) await run();
  return summarize(steps, Number(process.hrtime.bigint() - start));
}

function figures(saver: string, stats: RunStats): SaverFigures {
  return {
    saver,
    stepsPerSec: Math.round(stats.opsPerSec),
    p50Ms: round(stats.p50Ms),
    p99Ms: round(stats.p99Ms),
  };
}

export async function runLanggraphBench(
  options: LanggraphBenchOptions = {},
): Promise<LanggraphBenchResult> {
  const seconds = options.seconds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-langgraph-'));
  try {
    const memory = await measureSteps(new MemorySaver(), seconds);

    const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'library.db')}` });
    const local = new FencedCheckpointSaver({ gate, holder: 'bench' });
    const inProcess = await measureSteps(local, seconds);
    await local.close();

    const served = await Fencegate.open({ store: `sqlite:${join(dir, 'server.db')}` });
    const app = await buildServer({ store: served.store });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const { token } = await issueToken(served.store, { tenant: served.tenant, role: 'worker' });
    const client = new FencegateClient({ url: `http://127.0.0.1:${port}`, token });
    const remote = new FencedCheckpointSaver({ gate: client, holder: 'bench' });
    const overHttp = await measureSteps(remote, seconds);
    await remote.close();
    await client.close();
    await app.close();
    await served.close();

    const answers = options.answers ?? 30;
    const rejectMs = await measureReject(gate, answers);
    const interruptStopMs = await measureInterrupt(gate, answers);
    await gate.close();
    return {
      savers: [
        figures('MemorySaver', memory),
        figures('FencedCheckpointSaver, in process (SQLite)', inProcess),
        figures('FencedCheckpointSaver, over HTTP (SQLite)', overHttp),
      ],
      addedP50Ms: round(inProcess.p50Ms - memory.p50Ms),
      rejectMs,
      interruptStopMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A graph that steps every 1 ms until its run is stopped. */
function endlessGraph(saver: FencedCheckpointSaver) {
  return new StateGraph(State)
    .addNode('work', async (state) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { n: state.n + 1 };
    })
    .addEdge(START, 'work')
    .addConditionalEdges('work', () => 'work')
    .compile({ checkpointer: saver });
}

/** Starts an endless run on `thread` and waits until it has stored a few steps. */
async function busy(gate: Fencegate, saver: FencedCheckpointSaver, thread: string) {
  const running = runThread(endlessGraph(saver), {
    gate,
    threadId: thread,
    input: { n: 0 },
    config: { durability: 'sync', recursionLimit: 1_000_000 },
  });
  running.catch(() => undefined);
  for (;;) {
    const tuple = await saver.getTuple({ configurable: { thread_id: thread } });
    if (((tuple?.checkpoint.channel_values.n as number | undefined) ?? 0) >= 3) return { running };
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function measureReject(gate: Fencegate, times: number) {
  const saver = new FencedCheckpointSaver({ gate, holder: 'bench-reject' });
  const { running } = await busy(gate, saver, 'reject');
  const latencies: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = process.hrtime.bigint();
    await runThread(threeSteps(saver), { gate, threadId: 'reject', input: { n: 0 } }).catch(
      () => undefined,
    );
    latencies.push(Number(process.hrtime.bigint() - t0));
  }
  await runThread(threeSteps(saver), {
    gate,
    threadId: 'reject',
    input: { n: 0 },
    multitaskStrategy: 'interrupt',
  });
  await running.catch(() => undefined);
  return quantiles(latencies);
}

async function measureInterrupt(gate: Fencegate, times: number) {
  const saver = new FencedCheckpointSaver({ gate, holder: 'bench-interrupt' });
  const latencies: number[] = [];
  for (let i = 0; i < times; i++) {
    const thread = `interrupt-${i}`;
    const { running } = await busy(gate, saver, thread);
    const t0 = process.hrtime.bigint();
    const next = runThread(threeSteps(saver), {
      gate,
      threadId: thread,
      input: { n: 0 },
      multitaskStrategy: 'interrupt',
    });
    await running.catch(() => undefined);
    latencies.push(Number(process.hrtime.bigint() - t0));
    await next;
  }
  return quantiles(latencies);
}

function quantiles(latenciesNs: number[]): { p50: number; p99: number } {
  const stats = summarize(latenciesNs, 1);
  return { p50: round(stats.p50Ms), p99: round(stats.p99Ms) };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

export function formatLanggraphBench(result: LanggraphBenchResult): string {
  const lines = result.savers.map(
    (row) =>
      `${row.saver.padEnd(44)} ${String(row.stepsPerSec).padStart(6)} steps/s   p50 ${row.p50Ms.toFixed(3)} ms   p99 ${row.p99Ms.toFixed(3)} ms`,
  );
  lines.push(
    `added p50 per step in process: ${result.addedP50Ms.toFixed(3)} ms (target ≤ 2 ms: ${result.addedP50Ms <= 2 ? 'met' : 'not met'})`,
    `reject answers in p50 ${result.rejectMs.p50} ms, p99 ${result.rejectMs.p99} ms`,
    `interrupt stops the old run in p50 ${result.interruptStopMs.p50} ms, p99 ${result.interruptStopMs.p99} ms`,
    JSON.stringify({ bench: 'langgraph', ...result }),
  );
  return lines.join('\n');
}
