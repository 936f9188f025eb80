/**
 * FencedStore benchmark: `put` of one memory item, back to back, on LangGraph's InMemoryStore
 * (the baseline) and on FencedStore in process (a Fencegate on a SQLite file with its defaults)
 * and over HTTP (a server on such a file in this process, FencegateClient with a worker token).
 * Each put is an upsert of one key of a thread that holds 100 items; the fenced stores write
 * under the saver's lease, held from the first put. Then the same with a precondition
 * (`ifRevision`, the revision the last put left). Interleaved rounds, medians; the added p50 per
 * put is the fenced p50 minus InMemoryStore's. Before each SQLite file is closed (the library's,
 * the server's), `verify` replays its history.
 *
 *   npm run bench -- langgraph-memory [--seconds N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryStore, type BaseStore } from '@langchain/langgraph-checkpoint';
import type { FencegateApi } from '../src/api.js';
import { Fencegate } from '../src/gate.js';
import { FencedCheckpointSaver, FencedStore } from '../src/integrations/langgraph/index.js';
import { servedWorker } from './served-worker.js';
import { runSequential, type RunStats } from './stats.js';
import { violationsIn } from './verified-history.js';

export interface MemoryBenchOptions {
  seconds?: number;
  rounds?: number;
}

export interface MemoryRow {
  store: string;
  put: 'upsert' | 'ifRevision';
  putsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  addedP50Ms: number;
}

export interface MemoryBenchResult {
  rows: MemoryRow[];
  /** Violations `verify` found in the two files' histories after the run. */
  verifyViolations: number;
}

const NAMESPACE = ['users', 'u1', 'memories'];
const THREAD = 'bench-memory';

async function fencedStore(gate: FencegateApi): Promise<FencedStore> {
  const saver = new FencedCheckpointSaver({ gate, holder: 'bench' });
  const store = new FencedStore({ saver }).forThread(THREAD);
  for (let i = 0; i < 100; i += 1) await store.put(NAMESPACE, `fact-${i}`, { text: `fact ${i}` });
  return store;
}

async function measure(
  store: BaseStore,
  put: MemoryRow['put'],
  seconds: number,
): Promise<RunStats> {
  let revision = (await store.get(NAMESPACE, 'fact-0')) as { revision?: number } | null;
  return await runSequential(seconds, async (i) => {
    const value = { text: `fact 0, version ${i}` };
    if (put === 'upsert') return await store.put(NAMESPACE, 'fact-0', value);
    await (store as FencedStore).put(NAMESPACE, 'fact-0', value, {
      ifRevision: revision?.revision ?? 0,
    });
    revision = { revision: (revision?.revision ?? 0) + 1 };
  });
}

export async function runMemoryBench(options: MemoryBenchOptions = {}): Promise<MemoryBenchResult> {
  const seconds = options.seconds ?? 2;
  const rounds = options.rounds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-memory-'));
  try {
    const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'library.db')}` });
    const served = await servedWorker(dir);
    const { client } = served;
    const baseline = new InMemoryStore();
    for (let i = 0; i < 100; i += 1) await baseline.put(NAMESPACE, `fact-${i}`, { text: `${i}` });
    const stores: [string, BaseStore][] = [
      ['InMemoryStore', baseline],
      ['FencedStore, in process', await fencedStore(gate)],
      ['FencedStore, over HTTP', await fencedStore(client)],
    ];
    const rows: MemoryRow[] = [];
    for (const put of ['upsert', 'ifRevision'] as const) {
      const runs = new Map<string, RunStats[]>();
      for (let round = 0; round < rounds; round += 1) {
        for (const [name, store] of stores) {
          // InMemoryStore has no precondition: its upsert is the baseline of both rows.
          const kind = name === 'InMemoryStore' ? 'upsert' : put;
          runs.set(name, [...(runs.get(name) ?? []), await measure(store, kind, seconds)]);
        }
      }
      const medianOf = (name: string) => median(runs.get(name) ?? []);
      const base = medianOf('InMemoryStore').p50Ms;
      for (const [name] of stores) {
        const stats = medianOf(name);
        rows.push({
          store: name,
          put: name === 'InMemoryStore' ? 'upsert' : put,
          putsPerSec: stats.opsPerSec,
          p50Ms: stats.p50Ms,
          p99Ms: stats.p99Ms,
          addedP50Ms: stats.p50Ms - base,
        });
      }
    }
    const verifyViolations = (await served.violations()) + (await violationsIn(gate.store));
    await served.close();
    await gate.close();
    return { rows, verifyViolations };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(runs: RunStats[]): RunStats {
  const sorted = [...runs].sort((a, b) => a.p50Ms - b.p50Ms);
  return sorted[Math.floor(sorted.length / 2)] as RunStats;
}

export function formatMemoryBench(result: MemoryBenchResult): string {
  const lines = ['store                      put         puts/s      p50      p99   added p50'];
  for (const row of result.rows) {
    lines.push(
      `${row.store.padEnd(26)} ${row.put.padEnd(10)} ${row.putsPerSec.toFixed(0).padStart(7)} ${row.p50Ms.toFixed(3).padStart(8)} ${row.p99Ms.toFixed(3).padStart(8)} ${row.addedP50Ms.toFixed(3).padStart(10)}`,
    );
  }
  lines.push(
    `verify after the run: ${result.verifyViolations} violations`,
    JSON.stringify({ bench: 'langgraph-memory', ...result }),
  );
  return lines.join('\n');
}
