/**
 * Cutover benchmark: moving 10,000 scopes to a new policy and controller, against the raw floor
 * measured in the same run on the same store: one `UPDATE scopes SET fence = fence + 1, holder =
 * ?, policy_version = ?` over the same number of rows of a plain table (SQLite: a file with the
 * same settings; PostgreSQL: a table shaped like fencegate's `scopes` in the same database). The
 * raw statement is what a cutover would be without the per-scope audit entry, the progress mark
 * that makes it resumable, and the chunking that lets other writers in between.
 *
 *   npx tsx bench/cutover.ts [--store sqlite|postgres://…] [--scopes N] [--rounds N]
 *
 * On PostgreSQL both contenders live in a schema of their own, created for the run and dropped
 * afterwards. Before its store is closed, `verify` replays the history fencegate's rounds wrote;
 * the raw table is not a fencegate store.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Fencegate } from '../src/gate.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { parsePostgresUrl } from '../src/store/postgres/postgres-url.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { DEFAULT_SYNCHRONOUS } from '../src/store/sqlite/sqlite-database.js';
import { requireClean, violationsIn } from './verified-history.js';

export interface CutoverBenchOptions {
  /** 'sqlite' (a temp file, the default) or a `postgres://…` URL. */
  store?: string;
  scopes?: number;
  /** Cutovers (and raw updates) timed; the median is reported. Default 3. */
  rounds?: number;
}

export interface CutoverBenchResult {
  store: 'sqlite' | 'postgres';
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
  /** Violations `verify` found in the history of the fencegate store after the rounds. */
  verifyViolations: number;
}

const TARGET_MS = { sqlite: 1000, postgres: 2000 } as const;
const POLICIES = ['v7', 'v8'] as const;
/** Acquires in flight while the scopes are prepared. */
const SETUP_BATCH = 500;

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
  db.pragma(`synchronous = ${DEFAULT_SYNCHRONOUS}`);
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

/** The raw floor on PostgreSQL: a plain table shaped like fencegate's scopes, one UPDATE. */
async function postgresRawRounds(
  connectionString: string,
  schema: string,
  scopes: string[],
  rounds: number,
): Promise<number[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${schema}.raw_scopes (
      tenant text COLLATE "C" NOT NULL, scope text COLLATE "C" NOT NULL, fence bigint NOT NULL,
      holder text, lease_expires_at bigint, policy_version text, status text NOT NULL,
      updated_at bigint NOT NULL, PRIMARY KEY (tenant, scope)) WITH (fillfactor = 80)`);
    await client.query(
      `INSERT INTO ${schema}.raw_scopes
       SELECT 'default', s, 1, 'v7-worker', 0, 'v7', 'active', 0 FROM unnest($1::text[]) s`,
      [scopes],
    );
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const start = performance.now();
      const result = await client.query(
        `UPDATE ${schema}.raw_scopes SET fence = fence + 1, holder = $1, policy_version = $2`,
        ['controller', POLICIES[(round + 1) % 2]],
      );
      times.push(performance.now() - start);
      if (result.rowCount !== scopes.length) {
        throw new Error(`raw update moved ${result.rowCount} rows`);
      }
    }
    return times;
  } finally {
    await client.end();
  }
}

interface FencegateRounds {
  times: number[];
  repeatMs: number;
  violations: number;
}

async function fencegateRounds(
  gate: Fencegate,
  scopes: string[],
  rounds: number,
): Promise<FencegateRounds> {
  try {
    for (const version of POLICIES) await gate.registerPolicy({ version });
    for (let start = 0; start < scopes.length; start += SETUP_BATCH) {
      await Promise.all(
        scopes
          .slice(start, start + SETUP_BATCH)
          .map((scope) =>
            gate.acquire({ scope, holder: 'v7-worker', ttlMs: 3_600_000, policyVersion: 'v7' }),
          ),
      );
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
    const repeatMs = performance.now() - start;
    return { times, repeatMs, violations: await violationsIn(gate.store) };
  } finally {
    await gate.close();
  }
}

async function runSqlite(
  scopes: string[],
  rounds: number,
): Promise<{ raw: number[]; guarded: FencegateRounds }> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-cutover-'));
  try {
    const raw = rawRounds(join(dir, 'raw.db'), scopes, rounds);
    const gate = await Fencegate.open({
      store: SqliteStore.open({ path: join(dir, 'fencegate.db') }),
    });
    return { raw, guarded: await fencegateRounds(gate, scopes, rounds) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runPostgres(
  url: string,
  scopes: string[],
  rounds: number,
): Promise<{ raw: number[]; guarded: FencegateRounds }> {
  const { connectionString } = parsePostgresUrl(url);
  const schema = `fencegate_bench_cutover_${randomBytes(4).toString('hex')}`;
  const drop = async (): Promise<void> => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  };
  try {
    // The store creates the schema; the raw table goes next to its tables.
    const store = await PostgresStore.open({ url, schema, groupCommit: true });
    const gate = await Fencegate.open({ store });
    const raw = await postgresRawRounds(connectionString, schema, scopes, rounds).catch(
      async (error: unknown) => {
        await gate.close();
        throw error;
      },
    );
    return { raw, guarded: await fencegateRounds(gate, scopes, rounds) };
  } finally {
    await drop();
  }
}

export async function runCutoverBench(
  options: CutoverBenchOptions = {},
): Promise<CutoverBenchResult> {
  const count = options.scopes ?? 10_000;
  const rounds = options.rounds ?? 3;
  const scopes = scopeNames(count);
  const url = options.store ?? 'sqlite';
  const store = /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
  if (store === 'sqlite' && url !== 'sqlite') {
    throw new Error(`store must be 'sqlite' or a postgres:// URL, got ${url}`);
  }
  const { raw, guarded } =
    store === 'postgres' ? await runPostgres(url, scopes, rounds) : await runSqlite(scopes, rounds);
  const cutoverMs = median(guarded.times);
  const rawUpdateMs = median(raw);
  return {
    store,
    scopes: count,
    rounds,
    cutoverMs,
    rawUpdateMs,
    ratio: cutoverMs / rawUpdateMs,
    idempotentRepeatMs: guarded.repeatMs,
    targetMs: TARGET_MS[store],
    withinTarget: cutoverMs <= TARGET_MS[store],
    verifyViolations: guarded.violations,
  };
}

export function formatCutoverBench(result: CutoverBenchResult): string {
  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  const where = result.store === 'postgres' ? 'PostgreSQL' : 'SQLite';
  return [
    `cutover of ${result.scopes} scopes on ${where} (median of ${result.rounds})`,
    `  fencegate cutover (plan, chunks, audit)     ${ms(result.cutoverMs)}   (${((result.cutoverMs * 1000) / result.scopes).toFixed(1)} us/scope)`,
    `  raw single UPDATE of the same rows          ${ms(result.rawUpdateMs)}`,
    `  ratio fencegate / raw                       ${result.ratio.toFixed(1)}x`,
    `  same cutoverId again (no bump)              ${ms(result.idempotentRepeatMs)}`,
    `  target <= ${result.targetMs} ms: ${result.withinTarget ? 'met' : 'MISSED'}`,
    `  verify after the rounds                     ${result.verifyViolations} violations`,
    JSON.stringify(result),
    '',
  ].join('\n');
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(resolve(invokedPath)).href) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      store: { type: 'string' },
      scopes: { type: 'string' },
      rounds: { type: 'string' },
    },
  });
  const result = await runCutoverBench({
    ...(values.store === undefined ? {} : { store: values.store }),
    ...(values.scopes === undefined ? {} : { scopes: Number(values.scopes) }),
    ...(values.rounds === undefined ? {} : { rounds: Number(values.rounds) }),
  });
  process.stdout.write(formatCutoverBench(result));
  requireClean('cutover', result.verifyViolations);
  process.exitCode = result.withinTarget ? 0 : 1;
}
