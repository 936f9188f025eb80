/**
 * Node effects benchmark: what staging one effect adds to a LangGraph.js run. One 3-node graph
 * (plan → act → report) on one thread, under LangGraph's default durability `async`, its `act`
 * either returning alone or staging one effect with `stageEffect` first:
 *
 *  - MemorySaver, LangGraph's in-memory saver, no effect (the framework's default: it has none);
 *  - FencedCheckpointSaver in process (a Fencegate on a SQLite file), without and with the effect;
 *  - FencedCheckpointSaver over HTTP (a server on such a file in this process, the saver through
 *    FencegateClient with a worker token), without and with the effect.
 *
 * The figure is the p50 of a whole run; the added p50 per staged effect is the p50 with the effect
 * minus the p50 without it, on the same saver (the effect rides the commit of `act`'s writes, so
 * it costs an intent row, not a commit), and, beside it, the p50 with the effect minus
 * MemorySaver's. Interleaved rounds (`--rounds`), medians. No dispatcher runs: delivery is the
 * dispatch benchmark's. Before each SQLite file is closed (the library's, the server's), `verify`
 * replays its history.
 *
 *   npm run bench -- node-effects [--seconds N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Fencegate } from '../src/gate.js';
import { FencedCheckpointSaver, stageEffect } from '../src/integrations/langgraph/index.js';
import { servedWorker } from './served-worker.js';
import { summarize } from './stats.js';
import { violationsIn } from './verified-history.js';

const State = Annotation.Root({
  n: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
});

export interface NodeEffectsBenchOptions {
  seconds?: number;
  rounds?: number;
}

export interface NodeEffectsRow {
  saver: string;
  effect: boolean;
  p50MsPerRun: number;
  p99MsPerRun: number;
  runs: number;
}

export interface NodeEffectsBenchResult {
  rows: NodeEffectsRow[];
  /** p50 per run with one staged effect minus without, on the same saver. */
  addedP50MsPerEffect: { inProcess: number; overHttp: number };
  /** p50 per run with one staged effect minus MemorySaver's run without. */
  addedP50MsVsMemorySaver: { inProcess: number; overHttp: number };
  /** Violations `verify` found in the two files' histories after the run. */
  verifyViolations: number;
}

function graphOf(checkpointer: BaseCheckpointSaver, effect: boolean) {
  let run = 0;
  return new StateGraph(State)
    .addNode('plan', (state) => ({ n: state.n + 1 }))
    .addNode('act', (state, config: RunnableConfig) => {
      if (effect) stageEffect(config, 'notify', 'crm', { run: (run += 1) });
      return { n: state.n + 1 };
    })
    .addNode('report', (state) => ({ n: state.n + 1 }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'report')
    .addEdge('report', END)
    .compile({ checkpointer });
}

/** Runs the graph on one thread for `seconds`; the time of each whole run, in ns. */
async function measureRuns(checkpointer: BaseCheckpointSaver, effect: boolean, seconds: number) {
  const graph = graphOf(checkpointer, effect);
  const config = {
    configurable: { thread_id: `bench-${effect ? 'effect' : 'plain'}` },
    durability: 'async' as const,
  };
  for (let i = 0; i < 20; i++) await graph.invoke({ n: 0 }, config); // warm-up
  const runs: number[] = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  while (process.hrtime.bigint() < end) {
    const t0 = process.hrtime.bigint();
    await graph.invoke({ n: 0 }, config);
    runs.push(Number(process.hrtime.bigint() - t0));
  }
  return summarize(runs, 1);
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (ms: number): number => Math.round(ms * 1000) / 1000;

export async function runNodeEffectsBench(
  options: NodeEffectsBenchOptions = {},
): Promise<NodeEffectsBenchResult> {
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-effects-'));
  try {
    const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'library.db')}` });
    const served = await servedWorker(dir);
    const client = served.client;
    const local = new FencedCheckpointSaver({ gate, holder: 'bench' });
    const remote = new FencedCheckpointSaver({ gate: client, holder: 'bench' });
    const cases = [
      { saver: 'MemorySaver', checkpointer: new MemorySaver(), effect: false },
      { saver: 'FencedCheckpointSaver, in process (SQLite)', checkpointer: local, effect: false },
      { saver: 'FencedCheckpointSaver, in process (SQLite)', checkpointer: local, effect: true },
      { saver: 'FencedCheckpointSaver, over HTTP (SQLite)', checkpointer: remote, effect: false },
      { saver: 'FencedCheckpointSaver, over HTTP (SQLite)', checkpointer: remote, effect: true },
    ];
    const p50s = cases.map(() => [] as number[]);
    const p99s = cases.map(() => [] as number[]);
    const counts = cases.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      // Rounds interleave the cases, so a change of the machine's load hits all of them.
      for (const [i, one] of cases.entries()) {
        const stats = await measureRuns(one.checkpointer, one.effect, seconds);
        p50s[i]!.push(stats.p50Ms);
        p99s[i]!.push(stats.p99Ms);
        counts[i]!.push(stats.ops);
      }
    }
    await local.close();
    await remote.close();
    const verifyViolations = (await served.violations()) + (await violationsIn(gate.store));
    await served.close();
    await gate.close();
    const rows = cases.map((one, i) => ({
      saver: one.saver,
      effect: one.effect,
      p50MsPerRun: round(median(p50s[i]!)),
      p99MsPerRun: round(median(p99s[i]!)),
      runs: median(counts[i]!),
    }));
    const [memory, localPlain, localEffect, remotePlain, remoteEffect] = rows.map(
      (row) => row.p50MsPerRun,
    ) as [number, number, number, number, number];
    return {
      rows,
      addedP50MsPerEffect: {
        inProcess: round(localEffect - localPlain),
        overHttp: round(remoteEffect - remotePlain),
      },
      addedP50MsVsMemorySaver: {
        inProcess: round(localEffect - memory),
        overHttp: round(remoteEffect - memory),
      },
      verifyViolations,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatNodeEffectsBench(result: NodeEffectsBenchResult): string {
  const lines = result.rows.map(
    (row) =>
      `${row.saver.padEnd(44)} ${row.effect ? 'one effect' : 'no effect '}   p50 ${row.p50MsPerRun.toFixed(3)} ms per run   p99 ${row.p99MsPerRun.toFixed(3)} ms   (${row.runs} runs)`,
  );
  const { inProcess, overHttp } = result.addedP50MsPerEffect;
  lines.push(
    `added p50 per staged effect: in process ${inProcess.toFixed(3)} ms (target ≤ 2 ms: ${inProcess <= 2 ? 'met' : 'not met'}), over HTTP ${overHttp.toFixed(3)} ms (target ≤ 3 ms: ${overHttp <= 3 ? 'met' : 'not met'})`,
    `a run with one effect against MemorySaver's run: in process +${result.addedP50MsVsMemorySaver.inProcess.toFixed(3)} ms, over HTTP +${result.addedP50MsVsMemorySaver.overHttp.toFixed(3)} ms`,
    `verify after the run: ${result.verifyViolations} violations`,
    JSON.stringify({ bench: 'node-effects', ...result }),
  );
  return lines.join('\n');
}
