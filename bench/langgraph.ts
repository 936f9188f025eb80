/**
 * LangGraph.js benchmark: one 3-node graph (each node one step) run on three checkpointers in one
 * run, every run of a checkpointer on the same thread, under LangGraph's default durability
 * `async` (the target's row) and under `sync` (each step's checkpoint is stored before the next
 * step starts):
 *
 *  - MemorySaver, LangGraph's in-memory saver (the baseline);
 *  - FencedCheckpointSaver in process, a Fencegate on a SQLite file with its defaults;
 *  - FencedCheckpointSaver over HTTP: a fencegate server on such a file in this process, the
 *    saver through FencegateClient with a worker token.
 *
 * A step's time is the gap between two updates of `graph.stream` (the first from the call);
 * steps/s counts every step over the whole time. The p50 of each step of the graph is printed too:
 * the first step carries the run's start (LangGraph's setup, the saver's read of the newest
 * checkpoint), the last one, under `async`, the checkpoints still being stored, so which of them
 * the p50 of all steps lands on depends on which is shorter. Under `async` LangGraph hands the
 * saver a run's checkpoints one at a time, each once the one before is stored, and this graph's
 * nodes never yield to the event loop: all of a run's checkpoints are stored after its last node,
 * one durable commit after another, in its last step. So the time per run (and its difference to
 * MemorySaver's) is printed as well, with the fenced savers' commits per run.
 * Then, in process, two answers of runThread to a second message on a busy thread: how long a
 * `reject` takes to refuse, and how long an `interrupt` takes to stop the old run (from calling
 * runThread until the old run's invoke rejects; the old run loops over a 1 ms step).
 *
 * Three interleaved rounds of each saver (`--rounds`), medians. Before each SQLite file is
 * closed (the library's, the server's), `verify` replays its history.
 *
 *   npm run bench -- langgraph [--seconds N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../src/api.js';
import { Fencegate } from '../src/gate.js';
import { FencedCheckpointSaver, runThread } from '../src/integrations/langgraph/index.js';
import { servedWorker } from './served-worker.js';
import { summarize, type RunStats } from './stats.js';
import { violationsIn } from './verified-history.js';

const State = Annotation.Root({
  n: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
});

export interface LanggraphBenchOptions {
  seconds?: number;
  /** Interleaved rounds of every saver; the figures are the medians. Default 3. */
  rounds?: number;
  /** Repetitions of each multitask answer. */
  answers?: number;
}

type Durability = 'async' | 'sync';

export interface SaverFigures {
  saver: string;
  durability: Durability;
  stepsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The p50 of the graph's first, second and third step. */
  stepP50Ms: number[];
  /** The mean time of a whole run of the graph. */
  msPerRun: number;
  /** Commits the saver sent per run (not counted for MemorySaver). */
  commitsPerRun: number | null;
}

export interface LanggraphBenchResult {
  savers: SaverFigures[];
  /** In process, LangGraph's default durability: fenced p50 per step minus MemorySaver's. */
  addedP50Ms: number;
  /** The same under `sync`. */
  addedP50MsSync: number;
  /** In process, the mean time of a run, fenced minus MemorySaver's, under `async` and `sync`. */
  addedMsPerRun: Record<Durability, number>;
  rejectMs: { p50: number; p99: number };
  interruptStopMs: { p50: number; p99: number };
  /** Violations `verify` found in the two files' histories after the run. */
  verifyViolations: number;
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

/**
 * Runs the graph on one thread for `seconds`; times every step. Under `async` the last step's
 * checkpoint is still being written when its update arrives: its time runs to the run's end.
 */
async function measureSteps(
  checkpointer: BaseCheckpointSaver,
  seconds: number,
  durability: Durability,
  commits: () => number = () => 0,
) {
  const graph = threeSteps(checkpointer);
  const config = { configurable: { thread_id: `bench-${durability}` }, durability };
  const steps: number[] = [];
  const byStep: number[][] = [];
  const run = async () => {
    const gaps: number[] = [];
    let last = process.hrtime.bigint();
    for await (const _update of await graph.stream(
      { n: 0 },
      { ...config, streamMode: 'updates' },
    )) {
      const now = process.hrtime.bigint();
      gaps.push(Number(now - last));
      last = now;
    }
    gaps[gaps.length - 1] = (gaps.at(-1) ?? 0) + Number(process.hrtime.bigint() - last);
    steps.push(...gaps);
    gaps.forEach((gap, i) => (byStep[i] ??= []).push(gap));
  };
  for (let i = 0; i < 20; i++) await run(); // warm-up
  steps.length = 0;
  byStep.length = 0;
  const commitsBefore = commits();
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let runs = 0;
  for (; process.hrtime.bigint() < end; runs++) await run();
  const elapsedNs = Number(process.hrtime.bigint() - start);
  const stats = summarize(steps, elapsedNs);
  return {
    ...stats,
    stepP50Ms: byStep.map((gaps) => summarize(gaps, 1).p50Ms),
    msPerRun: elapsedNs / 1e6 / runs,
    commitsPerRun: (commits() - commitsBefore) / runs,
  };
}

type StepStats = RunStats & { stepP50Ms: number[]; msPerRun: number; commitsPerRun: number };

/** Each figure the median of the rounds' figures. */
function medianRun(runs: StepStats[]): StepStats {
  const median = (pick: (run: StepStats) => number): number => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  return {
    ops: median((run) => run.ops),
    seconds: median((run) => run.seconds),
    opsPerSec: median((run) => run.opsPerSec),
    p50Ms: median((run) => run.p50Ms),
    p99Ms: median((run) => run.p99Ms),
    stepP50Ms: (runs[0]?.stepP50Ms ?? []).map((_, i) => median((run) => run.stepP50Ms[i] ?? 0)),
    msPerRun: median((run) => run.msPerRun),
    commitsPerRun: median((run) => run.commitsPerRun),
  };
}

function figures(
  saver: string,
  durability: Durability,
  stats: StepStats,
  countsCommits = true,
): SaverFigures {
  return {
    saver,
    durability,
    stepsPerSec: Math.round(stats.opsPerSec),
    p50Ms: round(stats.p50Ms),
    p99Ms: round(stats.p99Ms),
    stepP50Ms: stats.stepP50Ms.map(round),
    msPerRun: round(stats.msPerRun),
    commitsPerRun: countsCommits ? Math.round(stats.commitsPerRun * 100) / 100 : null,
  };
}

/** Counts the calls of `gate.commit` (every write of the saver is one). */
function countCommits(gate: FencegateApi): () => number {
  let count = 0;
  const commit = gate.commit.bind(gate);
  gate.commit = (request) => {
    count += 1;
    return commit(request);
  };
  return () => count;
}

export async function runLanggraphBench(
  options: LanggraphBenchOptions = {},
): Promise<LanggraphBenchResult> {
  const seconds = options.seconds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-langgraph-'));
  try {
    const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'library.db')}` });
    const served = await servedWorker(dir);
    const client = served.client;
    const commitCounts = {
      memory: () => 0,
      local: countCommits(gate),
      remote: countCommits(client),
    };
    const savers = {
      memory: new MemorySaver(),
      local: new FencedCheckpointSaver({ gate, holder: 'bench' }),
      remote: new FencedCheckpointSaver({ gate: client, holder: 'bench' }),
    };
    const rows: SaverFigures[] = [];
    const added: Record<Durability, number> = { async: 0, sync: 0 };
    const addedPerRun: Record<Durability, number> = { async: 0, sync: 0 };
    const rounds = options.rounds ?? 3;
    for (const durability of ['async', 'sync'] as const) {
      // Rounds interleave the savers, so a change of the machine's load hits all of them.
      const runs: Record<keyof typeof savers, StepStats[]> = { memory: [], local: [], remote: [] };
      for (let r = 0; r < rounds; r++) {
        for (const name of ['memory', 'local', 'remote'] as const) {
          runs[name].push(
            await measureSteps(savers[name], seconds, durability, commitCounts[name]),
          );
        }
      }
      const memory = medianRun(runs.memory);
      const local = medianRun(runs.local);
      rows.push(
        figures('MemorySaver', durability, memory, false),
        figures('FencedCheckpointSaver, in process (SQLite)', durability, local),
        figures('FencedCheckpointSaver, over HTTP (SQLite)', durability, medianRun(runs.remote)),
      );
      added[durability] = round(local.p50Ms - memory.p50Ms);
      addedPerRun[durability] = round(local.msPerRun - memory.msPerRun);
    }
    await savers.local.close();
    await savers.remote.close();
    const servedViolations = await served.violations();
    await served.close();

    const answers = options.answers ?? 30;
    const rejectMs = await measureReject(gate, answers);
    const interruptStopMs = await measureInterrupt(gate, answers);
    const verifyViolations = servedViolations + (await violationsIn(gate.store));
    await gate.close();
    return {
      savers: rows,
      addedP50Ms: added.async,
      addedP50MsSync: added.sync,
      addedMsPerRun: addedPerRun,
      rejectMs,
      interruptStopMs,
      verifyViolations,
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
      `${row.saver.padEnd(44)} ${row.durability.padEnd(6)}${String(row.stepsPerSec).padStart(6)} steps/s   p50 ${row.p50Ms.toFixed(3)} ms   p99 ${row.p99Ms.toFixed(3)} ms   p50 by step ${row.stepP50Ms.map((ms) => ms.toFixed(2)).join(' / ')} ms   ${row.msPerRun.toFixed(2)} ms per run${row.commitsPerRun === null ? '' : `, ${row.commitsPerRun} commits`}`,
  );
  lines.push(
    `added p50 per step in process, durability async (the default): ${result.addedP50Ms.toFixed(3)} ms (target ≤ 2 ms: ${result.addedP50Ms <= 2 ? 'met' : 'not met'}); sync: ${result.addedP50MsSync.toFixed(3)} ms`,
    `added per run of the graph in process: async ${result.addedMsPerRun.async.toFixed(3)} ms, sync ${result.addedMsPerRun.sync.toFixed(3)} ms`,
    `reject answers in p50 ${result.rejectMs.p50} ms, p99 ${result.rejectMs.p99} ms`,
    `interrupt stops the old run in p50 ${result.interruptStopMs.p50} ms, p99 ${result.interruptStopMs.p99} ms`,
    `verify after the run: ${result.verifyViolations} violations`,
    JSON.stringify({ bench: 'langgraph', ...result }),
  );
  return lines.join('\n');
}
