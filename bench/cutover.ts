/**
 * Cutover benchmark: moving 10,000 scopes to a new policy and controller on SQLite, against the
 * raw floor measured in the same run: one `UPDATE scopes SET fence = fence + 1, holder = ?,
 * policy_version = ?` over the same number of rows of a plain table with the same file settings.
 * The raw statement is what a cutover would be without the per-scope audit entry, the progress
 * mark that makes it resumable, and the chunking that lets other writers in between.
 *
 *   npx tsx bench/cutover.ts [--scopes N] [--rounds N]
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Fencegate } from '../src/gate.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

export interface CutoverBenchOptions {
  store?: 'sqlite';
  scopes?: number;
  /** Cutovers (and raw updates) timed; the median is reported. Default 3. */
  rounds?: number;
}

export interface CutoverBenchResult {
  store: 'sqlite';
  scopes: number;
  rounds: number;
  /** Median wall time of one cutover of every scope (plan, chunks, completion). */
  cutoverMs: number;
  /** Median wall time of the raw single UPDATE of as many rows. */
  rawUpdateMs: number;
  /** cutoverMs / rawUpdateMs. */
  ratio: number;
  /** Repeating a finished cutover with the same cutoverId (answers its fences, bumps nothing). */
  idempotentRepeatMs: number;
  targetMs: number;
  withinTarget: boolean;
}

const TARGET_MS = 1000;
const POLICIES = ['v7', 'v8'] as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function scopeNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `wf-${i}/memory`);
}

/** The same pragmas the SQLite store sets when it opens a file. */
function rawDatabase(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = OFF');
  db.pragma('temp_store = MEMORY');
  return db;
}

function rawRounds(path: string, scopes: string[], rounds: number): number[] {
  const db = rawDatabase(path);
  db.exec(`CREATE TABLE scopes (tenant TEXT NOT NULL, scope TEXT NOT NULL, fence INTEGER NOT NULL,
    holder TEXT, policy_version TEXT, PRIMARY KEY (tenant, scope)) WITHOUT ROWID`);
  const insert = db.prepare(
    "INSERT INTO scopes (tenant, scope, fence, holder, policy_version) VALUES ('default', ?, 1, NULL, 'v7')",
  );
  db.transaction(() => {
    for (const scope of scopes) insert.run(scope);
  })();
  const update = db.prepare('UPDATE scopes SET fence = fence + 1, holder = ?, policy_version = ?');
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    const changes = update.run('controller', POLICIES[(round + 1) % 2]).changes;
    times.push(performance.now() - start);
    if (changes !== scopes.length) throw new Error(`raw update moved ${changes} rows`);
  }
  db.close();
  return times;
}

async function fencegateRounds(
  path: string,
  scopes: string[],
  rounds: number,
): Promise<{ times: number[]; repeatMs: number }> {
  const gate = await Fencegate.open({ store: SqliteStore.open({ path }) });
  try {
    for (const version of POLICIES) await gate.registerPolicy({ version });
    for (const scope of scopes) {
      await gate.acquire({ scope, holder: 'v7-worker', ttlMs: 3_600_000, policyVersion: 'v7' });
    }
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const start = performance.now();
      const result = await gate.cutover({
        cutoverId: `bench-${round}`,
        toPolicy: POLICIES[(round + 1) % 2]!,
        holder: `controller-${round}`,
        scopes,
      });
      times.push(performance.now() - start);
      if (result.scopes !== scopes.length) throw new Error(`cutover moved ${result.scopes} scopes`);
    }
    const start = performance.now();
    await gate.cutover({
      cutoverId: `bench-${rounds - 1}`,
      toPolicy: POLICIES[rounds % 2]!,
      holder: `controller-${rounds - 1}`,
      scopes,
    });
    return { times, repeatMs: performance.now() - start };
  } finally {
    await gate.close();
  }
}

export async function runCutoverBench(
  options: CutoverBenchOptions = {},
): Promise<CutoverBenchResult> {
  const count = options.scopes ?? 10_000;
  const rounds = options.rounds ?? 3;
  const scopes = scopeNames(count);
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-cutover-'));
  try {
    const raw = rawRounds(join(dir, 'raw.db'), scopes, rounds);
    const guarded = await fencegateRounds(join(dir, 'fencegate.db'), scopes, rounds);
    const cutoverMs = median(guarded.times);
    const rawUpdateMs = median(raw);
    return {
      store: 'sqlite',
      scopes: count,
      rounds,
      cutoverMs,
      rawUpdateMs,
      ratio: cutoverMs / rawUpdateMs,
      idempotentRepeatMs: guarded.repeatMs,
      targetMs: TARGET_MS,
      withinTarget: cutoverMs <= TARGET_MS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatCutoverBench(result: CutoverBenchResult): string {
  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  return [
    `cutover of ${result.scopes} scopes on SQLite (median of ${result.rounds})`,
    `  fencegate cutover (plan, chunks, audit)     ${ms(result.cutoverMs)}   (${((result.cutoverMs * 1000) / result.scopes).toFixed(1)} us/scope)`,
    `  raw single UPDATE of the same rows          ${ms(result.rawUpdateMs)}`,
    `  ratio fencegate / raw                       ${result.ratio.toFixed(1)}x`,
    `  same cutoverId again (no bump)              ${ms(result.idempotentRepeatMs)}`,
    `  target <= ${result.targetMs} ms: ${result.withinTarget ? 'met' : 'MISSED'}`,
    JSON.stringify(result),
    '',
  ].join('\n');
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(resolve(invokedPath)).href) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { scopes: { type: 'string' }, rounds: { type: 'string' } },
  });
  const result = await runCutoverBench({
    ...(values.scopes === undefined ? {} : { scopes: Number(values.scopes) }),
    ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) }),
  });
  process.stdout.write(formatCutoverBench(result));
  process.exitCode = result.withinTarget ? 0 : 1;
}
