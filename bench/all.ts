/**
 * `npm run bench -- all`: one short run of every layer of the performance goal (SQLite, PostgreSQL, HTTP, dispatch, rollback, scale), each against its
 * raw baseline measured in the same run, printed as one table (and, last, one JSON line). The
 * figures come from the benchmarks' own functions; this file only calls them and compares.
 *
 *   npm run bench -- all [--seconds N] [--store postgres://…] [--scopes N] [--memory-seconds N]
 *
 * PostgreSQL runs against `--store` when it is a postgres:// URL, else the local server
 * (postgres://postgres@127.0.0.1:5432/postgres); its row says so when none answers. Each
 * benchmark verifies the stores it wrote; a violation in any fails the whole run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDispatchBench } from './dispatch.js';
import { runHttpBench } from './http.js';
import { runPostgresCommitBench } from './postgres/commit.js';
import { runRolloutBench } from './rollout.js';
import {
  memoryTrend,
  scopeScaling,
  serverMemory,
  staleTraffic,
  type MemoryTrend,
} from './scale.js';
import { runSqliteCommitBench } from './sqlite-commit.js';
import { requireClean, ViolationsFound } from './verified-history.js';

export interface AllBenchOptions {
  seconds: number;
  postgresUrl: string;
  memorySeconds: number;
  /** Scopes of the large store of the scale row (ten records each). */
  largeScopes: number;
}

interface Row {
  layer: string;
  target: string;
  figure: string;
  baseline: string;
  met: boolean | null;
}

export const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

const fixed = (n: number, digits = 2): string => n.toFixed(digits);

async function postgresRow(options: AllBenchOptions): Promise<Row> {
  const layer = 'PostgreSQL group commit vs raw guarded UPDATE (pool 16, 64 in flight)';
  try {
    const f = await runPostgresCommitBench({
      url: options.postgresUrl,
      seconds: options.seconds,
      rounds: 1,
      pgbenchSeconds: 0,
      log: () => undefined,
    });
    return {
      layer,
      target: '>= 0.85',
      figure: `${fixed(f.ratio)} (${f.guardedOpsPerSec.toFixed(0)} ops/s)`,
      baseline: `${f.rawOpsPerSec.toFixed(0)} ops/s`,
      met: f.ratio >= 0.85,
    };
  } catch (error) {
    // A run that broke its history is a failure, not a row that could not run.
    if (error instanceof ViolationsFound) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { layer, target: '>= 0.85', figure: `not run: ${reason}`, baseline: '', met: null };
  }
}

/** The three SQLite rows, from one run of the SQLite commit bench (raw NORMAL and FULL included). */
async function sqliteRows(options: AllBenchOptions): Promise<Row[]> {
  const f = await runSqliteCommitBench({ seconds: options.seconds, inFlight: 64 });
  const rawNormal = `raw NORMAL ${f.rawNormalOps} ops/s`;
  const groupFullOverNormal = (f.groupFullOps ?? 0) / (f.rawNormalOps ?? 1);
  return [
    {
      layer: 'SQLite NORMAL, in process, one at a time',
      target: '>= 0.35',
      figure: `${fixed(f.ratio ?? 0)} (${f.guardedNormalOps} ops/s)`,
      baseline: rawNormal,
      met: (f.ratio ?? 0) >= 0.35,
    },
    {
      layer: 'SQLite NORMAL, group commit, 64 in flight',
      target: '>= 0.60',
      figure: `${fixed(f.groupRatioNormal ?? 0)} (${f.groupNormalOps} ops/s)`,
      baseline: rawNormal,
      met: (f.groupRatioNormal ?? 0) >= 0.6,
    },
    {
      layer: 'SQLite FULL, group commit, 64 in flight',
      target: '>= 3x raw FULL, >= 0.45 raw NORMAL',
      figure: `${fixed(f.groupOverRawFull ?? 0)}x, ${fixed(groupFullOverNormal)} (${f.groupFullOps} ops/s)`,
      baseline: `raw FULL ${f.rawFullOps} ops/s; ${rawNormal}`,
      met: (f.groupOverRawFull ?? 0) >= 3 && groupFullOverNormal >= 0.45,
    },
  ];
}

async function httpRow(options: AllBenchOptions): Promise<Row> {
  const f = await runHttpBench({ seconds: options.seconds, connections: 64, rounds: 1 });
  return {
    layer: 'HTTP POST /v1/commit vs the same server no-op route',
    target: '>= 0.50, p99 <= bare',
    figure: `${fixed(f.ratio)}, p99 ${f.commitP99Ms} ms`,
    baseline: `${f.noopPerSec} req/s no-op; bare p99 ${f.bareCommitP99Ms} ms`,
    met: f.ratio >= 0.5 && f.commitP99Ms <= f.bareCommitP99Ms,
  };
}

async function dispatchRow(options: AllBenchOptions): Promise<Row> {
  const r = await runDispatchBench({ seconds: options.seconds, dispatchers: 1 });
  requireClean('dispatch', r.violations);
  const ratio = r.intentsPerSec / r.rawPostsPerSec;
  return {
    layer: 'intents delivered vs raw POSTs (1 dispatcher)',
    target: '>= 0.50, p50 <= 5 ms',
    figure: `${fixed(ratio)}, p50 ${r.p50Ms.toFixed(0)} ms`,
    baseline: `${r.rawPostsPerSec.toFixed(0)} POSTs/s`,
    met: ratio >= 0.5 && r.p50Ms <= 5,
  };
}

/** The rollback row at its smaller size on SQLite (`npm run bench -- rollout` runs both stores). */
async function rolloutRow(options: AllBenchOptions): Promise<Row> {
  const { rows, verifyViolations } = await runRolloutBench({
    sizes: [10_000],
    seconds: options.seconds,
    log: () => undefined,
  });
  requireClean('rollout', verifyViolations);
  const r = rows[0]!;
  return {
    layer: `rollback of ${r.scopes.toLocaleString('en')} moved scopes: fenced; other scopes' commits`,
    target: `<= ${r.targetMs} ms; >= 0.80`,
    figure: `${r.fencedMs} ms; ${fixed(r.windowRatio)}`,
    baseline: `${Math.round((r.commits.before + r.commits.after) / 2)} commits per ${options.seconds} s without`,
    met: r.fencedWithinTarget && r.ratioWithinTarget,
  };
}

async function scaleRows(options: AllBenchOptions): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-all-'));
  try {
    const scaling = await scopeScaling(dir, options.largeScopes, options.seconds);
    const stale = await staleTraffic(join(dir, 'stale.db'), options.seconds);
    const ratio = stale.withStale.opsPerSec / stale.alone.opsPerSec;
    const memory = await serverMemory(dir, options.memorySeconds);
    requireClean('scale', stale.violations + memory.violations);
    const rss = memoryTrend(memory.samples.map((m) => m.rssMiB));
    const heap = memoryTrend(memory.samples.map((m) => m.heapMiB));
    const path = (m: MemoryTrend): string =>
      `${m.first.toFixed(0)} -> ${m.middle.toFixed(0)} -> ${m.last.toFixed(0)}`;
    return [
      {
        layer: `commits at ${options.largeScopes.toLocaleString('en')} scopes / ${scaling.records.toLocaleString('en')} records vs 1,000 scopes`,
        target: '>= 0.9',
        figure: `${fixed(scaling.ratio)} (${scaling.largePerSec.toFixed(0)}/s, p99 ${scaling.largeP99Ms.toFixed(0)} ms)`,
        baseline: `${scaling.smallPerSec.toFixed(0)}/s at 1,000 scopes, p99 ${scaling.smallP99Ms.toFixed(0)} ms`,
        met: scaling.ratio >= 0.9,
      },
      {
        layer: 'healthy writer with 50% stale traffic vs alone',
        target: '>= 0.9',
        figure: `${fixed(ratio)} (${stale.withStale.opsPerSec.toFixed(0)}/s)`,
        baseline: `${stale.alone.opsPerSec.toFixed(0)}/s alone`,
        met: ratio >= 0.9,
      },
      {
        layer: `server memory under commit load, ${options.memorySeconds} s`,
        target: 'flat',
        figure: `RSS ${path(rss)} MiB; heap retained ${path(heap)} MiB`,
        baseline: `${memory.requests.toLocaleString('en')} commits`,
        met: rss.flat && heap.flat,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.layer,
    r.target,
    r.figure,
    r.baseline,
    r.met === null ? '-' : r.met ? 'met' : 'not met',
  ]);
  const header = ['layer', 'target', 'figure', 'raw baseline (same run)', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]): string =>
    `| ${c.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export async function runAllBench(options: AllBenchOptions): Promise<void> {
  const rows: Row[] = await sqliteRows(options);
  console.error('measured: SQLite commit');
  for (const run of [postgresRow, httpRow, dispatchRow, rolloutRow]) {
    rows.push(await run(options));
    console.error(`measured: ${rows.at(-1)?.layer}`);
  }
  rows.push(...(await scaleRows(options)));
  console.log(table(rows));
  // Each benchmark above verified the stores it wrote and failed on any violation.
  console.log(JSON.stringify({ bench: 'all', seconds: options.seconds, rows }));
}
