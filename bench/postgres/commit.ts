/**
 * PostgreSQL commit benchmark: in one run, the hand-written guarded UPDATE of a user table (a
 * prepared `UPDATE bench_memory … WHERE id = $2 AND revision = $3 AND fence = $4`, nothing else)
 * against fencegate's commit (scope lock, fence, holder, lease and revision checks, stored outcome,
 * audit entry), one function call per commit and with group commit (as the server runs it). Each
 * uses a pool of the same size and keeps the same number of writes in flight, every in-flight lane
 * writing its own row or scope. The three run interleaved for several rounds, so load from
 * elsewhere on the host hits them alike; ratios are the medians of the per-round ratios.
 *
 * After the rounds, PostgreSQL's pgbench (when installed) runs the same UPDATE of the same table
 * from 16 connections as an outside reference for what the database gives a plain C client here.
 * Its guard is `WHERE id = … AND fence = 1`: pgbench cannot know each row's current revision.
 *
 * With `--baseline-ref REF`, another version of fencegate (checked out from git beside the tree)
 * joins the rounds with its one-call and group-commit contenders, on a schema of its own: what a
 * change to the store gains or loses, measured in the same run.
 *
 * Before the schema is dropped, `verify` replays the history this tree's two contenders wrote
 * (they share one schema); the baseline version's schema is its own and is not verified.
 *
 *   tsx bench/postgres/commit.ts --store postgres://postgres@127.0.0.1:5432/test [--seconds 3]
 *     [--rounds 3] [--in-flight 64] [--pool 16] [--pgbench-seconds N (0 skips pgbench)]
 *     [--baseline-ref GIT_REF]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { redactPostgresUrl } from '../../src/store/postgres/postgres-url.js';
import { formatStats, summarize, type RunStats } from '../stats.js';
import { requireClean, violationsIn } from '../verified-history.js';
import { checkOutBaseline, type BaselineCheckout } from './baseline-checkout.js';
import { cpuPerOp, formatCpu, readCpu, type CpuPerOp } from './cpu-per-op.js';
import { findPgbench, runPgbench, type PgbenchRun } from './pgbench.js';

export interface PostgresCommitBenchOptions {
  url: string;
  /** Measured seconds per contender per round (default 3). */
  seconds?: number;
  /** Rounds of raw, single and group runs (default 3). */
  rounds?: number;
  inFlight?: number;
  pool?: number;
  /** Schema for the benchmark's tables (dropped and re-created). */
  schema?: string;
  /** pgbench's run length in seconds (default seconds × rounds); 0 skips pgbench. */
  pgbenchSeconds?: number;
  /**
   * A git ref of another version (e.g. the code before a change): its commit, one call per commit
   * and with group commit, joins the rounds, on a schema of its own.
   */
  baselineRef?: string;
  log?: (line: string) => void;
}

export interface PostgresCommitFigures {
  rawOpsPerSec: number;
  rawP50Ms: number;
  rawP99Ms: number;
  singleOpsPerSec: number;
  singleP50Ms: number;
  singleP99Ms: number;
  guardedOpsPerSec: number;
  guardedP50Ms: number;
  guardedP99Ms: number;
  /** guarded (group commit) / raw, median of the per-round ratios. */
  ratio: number;
  ratioSingle: number;
  /** pgbench's tps on the same table, or null when pgbench was skipped or absent. */
  pgbenchTps: number | null;
  pgbenchLatencyAvgMs: number | null;
  /** The baseline version's figures, when one was measured: this tree's / the baseline's. */
  baseline: {
    commit: string;
    singleOpsPerSec: number;
    groupOpsPerSec: number;
    singleVsBaseline: number;
    groupVsBaseline: number;
  } | null;
  /** Violations `verify` found in the history of this tree's contenders after the run. */
  verifyViolations: number;
}

const VALUE = { summary: 'compacted memory of the workflow', facts: ['a', 'b', 'c'], n: 0 };
const WARM_UP_SECONDS = 0.5;

type LaneOp = (lane: number, i: number) => Promise<void>;

/** Keeps `lanes` calls in flight for `seconds`; lane k always writes its own row or scope k. */
async function runLanes(seconds: number, lanes: number, op: LaneOp): Promise<RunStats> {
  const latencies: number[] = [];
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  let counter = 0;
  const lane = async (id: number): Promise<void> => {
    while (process.hrtime.bigint() < end) {
      const t0 = process.hrtime.bigint();
      await op(id, counter++);
      latencies.push(Number(process.hrtime.bigint() - t0));
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, id) => lane(id)));
  return summarize(latencies, Number(process.hrtime.bigint() - start));
}

async function rawContender(pool: pg.Pool, schema: string, lanes: number): Promise<LaneOp> {
  await pool.query(`CREATE TABLE ${schema}.bench_memory (
    id text PRIMARY KEY, value jsonb NOT NULL, revision bigint NOT NULL, fence bigint NOT NULL)
    WITH (fillfactor = 80)`);
  await pool.query(
    `INSERT INTO ${schema}.bench_memory SELECT 'wf-' || i || '/memory', '{}', 0, 1 FROM generate_series(0, $1 - 1) i`,
    [lanes],
  );
  const revisions = new Array<number>(lanes).fill(0);
  return async (lane, i) => {
    const revision = revisions[lane] ?? 0;
    revisions[lane] = revision + 1;
    const result = await pool.query({
      name: 'bench_raw_update',
      text: `UPDATE ${schema}.bench_memory SET value = $1, revision = revision + 1
             WHERE id = $2 AND revision = $3 AND fence = $4`,
      values: [JSON.stringify({ ...VALUE, n: i }), `wf-${lane}/memory`, revision, 1],
    });
    if (result.rowCount !== 1) throw new Error('the raw guarded update lost its guard');
  };
}

/** What the benchmark needs of a fencegate version: the facade over a PostgreSQL store. */
interface GateModules {
  Fencegate: { open(options: { store: unknown }): Promise<Fencegate> };
  PostgresStore: { open(options: object): Promise<unknown> };
}

async function openGates(
  modules: GateModules,
  url: string,
  schema: string,
  poolSize: number,
): Promise<[Fencegate, Fencegate]> {
  const single = await modules.Fencegate.open({
    store: await modules.PostgresStore.open({ url, schema, pool: { max: poolSize } }),
  });
  const group = await modules.Fencegate.open({
    store: await modules.PostgresStore.open({
      url,
      schema,
      groupCommit: true,
      pool: { max: poolSize },
    }),
  });
  return [single, group];
}

async function baselineModules(checkout: BaselineCheckout): Promise<GateModules> {
  const { Fencegate: BaselineGate } = await checkout.load<{ Fencegate: GateModules['Fencegate'] }>(
    'src/gate.js',
  );
  const { PostgresStore: BaselineStore } = await checkout.load<{
    PostgresStore: GateModules['PostgresStore'];
  }>('src/store/postgres/postgres-store.js');
  return { Fencegate: BaselineGate, PostgresStore: BaselineStore };
}

async function guardedContender(gate: Fencegate, lanes: number, name: string): Promise<LaneOp> {
  const fences: number[] = [];
  for (let lane = 0; lane < lanes; lane++) {
    const grant = await gate.acquire({
      scope: `${name}-${lane}/memory`,
      holder: 'bench',
      ttlMs: 86_400_000,
    });
    fences.push(grant.fence);
  }
  const revisions = new Array<number>(lanes).fill(0);
  return async (lane, i) => {
    const revision = revisions[lane] ?? 0;
    revisions[lane] = revision + 1;
    const result = await gate.commit({
      scope: `${name}-${lane}/memory`,
      fence: fences[lane] ?? 0,
      operationId: `bench-${name}-${lane}-${revision}`,
      writes: [{ name: 'memory', expectRevision: revision, value: { ...VALUE, n: i } }],
    });
    if (result.outcome !== 'committed')
      throw new Error(`fencegate rejected a fresh commit: ${result.error.code}`);
  };
}

const PGBENCH_CLIENTS = 16;
const PGBENCH_THREADS = 2;

/**
 * The raw contender's UPDATE for pgbench, on the same table and rows. Client c writes rows c,
 * c + 16, c + 32, … only, so with 16 or more rows no two connections ever wait on one row (as no
 * two lanes do in process). The guard is `fence = 1` without the revision: pgbench cannot know a row's revision.
 */
function pgbenchScript(schema: string, rows: number): string {
  const spread = Math.max(1, Math.floor(rows / PGBENCH_CLIENTS));
  const value = JSON.stringify({ ...VALUE, n: 0 }).replace(/"n":0}$/, '"n":');
  return [
    `\\set id (:client_id + ${PGBENCH_CLIENTS} * random(0, ${spread - 1})) % ${rows}`,
    '\\set n random(0, 1000000000)',
    `UPDATE ${schema}.bench_memory SET value = ('${value}' || :n || '}')::jsonb, revision = revision + 1 ` +
      `WHERE id = 'wf-' || :id || '/memory' AND fence = 1;`,
    '',
  ].join('\n');
}

/** Runs pgbench after the rounds; null (with a line saying why) when it is absent or fails. */
async function pgbenchReference(
  pool: pg.Pool,
  options: { url: string; schema: string; rows: number; seconds: number },
  log: (line: string) => void,
): Promise<PgbenchRun | null> {
  if (options.seconds <= 0) {
    log('pgbench: skipped (--pgbench-seconds 0)');
    return null;
  }
  const binary = findPgbench();
  if (binary === null) {
    log(
      'pgbench: not found (install it or set PGBENCH=/path/to/pgbench); outside reference skipped',
    );
    return null;
  }
  const dir = await mkdtemp(join(tmpdir(), 'fencegate-pgbench-'));
  try {
    const scriptPath = join(dir, 'guarded-update.sql');
    await writeFile(scriptPath, pgbenchScript(options.schema, options.rows));
    const revisions = async (): Promise<number> => {
      const { rows } = await pool.query<{ total: string }>(
        `SELECT sum(revision)::text AS total FROM ${options.schema}.bench_memory`,
      );
      return Number(rows[0]?.total ?? 0);
    };
    const before = await revisions();
    const result = await runPgbench({
      binary,
      url: options.url,
      scriptPath,
      clients: PGBENCH_CLIENTS,
      threads: PGBENCH_THREADS,
      seconds: options.seconds,
    });
    const written = (await revisions()) - before;
    log(
      `pgbench ${result.version} after the rounds: -c ${PGBENCH_CLIENTS} -j ${PGBENCH_THREADS} -T ${options.seconds} -M prepared, ` +
        `the same UPDATE of bench_memory guarded by WHERE id = … AND fence = 1 ` +
        `(no revision check: pgbench cannot know a row's revision)`,
    );
    log(
      `  ${result.tps.toFixed(0)} tps, latency average ${result.latencyAverageMs.toFixed(3)} ms, ` +
        `${result.transactions} transactions, ${result.failed} failed, ${written} rows updated`,
    );
    if (written !== result.transactions) {
      log('  warning: not every pgbench UPDATE matched its row; its tps is not comparable');
    }
    return result;
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    log(`pgbench: failed (${reason}); outside reference skipped`);
    return null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export async function runPostgresCommitBench(
  options: PostgresCommitBenchOptions,
): Promise<PostgresCommitFigures> {
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 3;
  const pgbenchSeconds = options.pgbenchSeconds ?? Math.max(1, Math.round(seconds * rounds));
  const inFlight = options.inFlight ?? 64;
  const poolSize = options.pool ?? 16;
  const schema = options.schema ?? 'fencegate_bench';
  const log = options.log ?? ((line: string) => console.log(line));

  const pool = new pg.Pool({ connectionString: options.url, max: poolSize });
  pool.on('error', () => undefined);
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await pool.query(`CREATE SCHEMA ${schema}`);
  const [single, group] = await openGates(
    { Fencegate, PostgresStore },
    options.url,
    schema,
    poolSize,
  );
  const baselineSchema = `${schema}_baseline`;
  const checkout =
    options.baselineRef === undefined ? null : await checkOutBaseline(options.baselineRef);
  const baseline =
    checkout === null
      ? null
      : await openGates(await baselineModules(checkout), options.url, baselineSchema, poolSize);
  try {
    log(
      `PostgreSQL commit at ${redactPostgresUrl(options.url)}: pool ${poolSize}, ${inFlight} in flight, ` +
        `${rounds} rounds of ${seconds} s each`,
    );
    const contenders: [string, LaneOp][] = [
      ['raw guarded UPDATE (prepared)', await rawContender(pool, schema, inFlight)],
      [
        'fencegate commit (one call per commit)',
        await guardedContender(single, inFlight, 'single'),
      ],
      ['fencegate commit (group commit)', await guardedContender(group, inFlight, 'group')],
    ];
    if (baseline !== null && checkout !== null) {
      contenders.push(
        [
          `baseline ${checkout.commit} (one call per commit)`,
          await guardedContender(baseline[0], inFlight, 'single'),
        ],
        [
          `baseline ${checkout.commit} (group commit)`,
          await guardedContender(baseline[1], inFlight, 'group'),
        ],
      );
    }
    const local = ['localhost', '127.0.0.1', '::1', '[::1]'].includes(
      new URL(options.url).hostname,
    );
    const results: RunStats[][] = contenders.map(() => []);
    const cpu: CpuPerOp[][] = contenders.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const [index, [label, op]] of contenders.entries()) {
        await runLanes(WARM_UP_SECONDS, inFlight, op);
        const before = readCpu(local);
        const stats = await runLanes(seconds, inFlight, op);
        const spent = cpuPerOp(before, readCpu(local), stats.ops);
        results[index]?.push(stats);
        cpu[index]?.push(spent);
        log(`round ${round + 1}  ${formatStats(label, stats)}   ${formatCpu(spent)}`);
      }
    }
    const [raw, one, grouped, baselineOne, baselineGrouped] = results as [
      RunStats[],
      RunStats[],
      RunStats[],
      RunStats[] | undefined,
      RunStats[] | undefined,
    ];
    const pick = (runs: RunStats[], key: keyof RunStats): number =>
      median(runs.map((run) => run[key]));
    const ratio = median(grouped.map((run, i) => run.opsPerSec / (raw[i]?.opsPerSec ?? Infinity)));
    const ratioSingle = median(
      one.map((run, i) => run.opsPerSec / (raw[i]?.opsPerSec ?? Infinity)),
    );
    const reference = await pgbenchReference(
      pool,
      { url: options.url, schema, rows: inFlight, seconds: pgbenchSeconds },
      log,
    );
    // Both of this tree's gates write the same schema: one replay covers them.
    const verifyViolations = await violationsIn(single.store);
    const figures: PostgresCommitFigures = {
      rawOpsPerSec: pick(raw, 'opsPerSec'),
      rawP50Ms: pick(raw, 'p50Ms'),
      rawP99Ms: pick(raw, 'p99Ms'),
      singleOpsPerSec: pick(one, 'opsPerSec'),
      singleP50Ms: pick(one, 'p50Ms'),
      singleP99Ms: pick(one, 'p99Ms'),
      guardedOpsPerSec: pick(grouped, 'opsPerSec'),
      guardedP50Ms: pick(grouped, 'p50Ms'),
      guardedP99Ms: pick(grouped, 'p99Ms'),
      ratio,
      ratioSingle,
      pgbenchTps: reference?.tps ?? null,
      pgbenchLatencyAvgMs: reference?.latencyAverageMs ?? null,
      baseline:
        checkout === null || baselineOne === undefined || baselineGrouped === undefined
          ? null
          : {
              commit: checkout.commit,
              singleOpsPerSec: pick(baselineOne, 'opsPerSec'),
              groupOpsPerSec: pick(baselineGrouped, 'opsPerSec'),
              singleVsBaseline: median(
                one.map((run, i) => run.opsPerSec / (baselineOne[i]?.opsPerSec ?? Infinity)),
              ),
              groupVsBaseline: median(
                grouped.map(
                  (run, i) => run.opsPerSec / (baselineGrouped[i]?.opsPerSec ?? Infinity),
                ),
              ),
            },
      verifyViolations,
    };
    log('medians:');
    for (const [index, [label]] of contenders.entries()) {
      const runs = cpu[index] ?? [];
      const database = runs.map((run) => run.databaseMicros);
      log(
        `  ${label.padEnd(48)} ${formatCpu({
          processMicros: median(runs.map((run) => run.processMicros)),
          databaseMicros: database.includes(null) ? null : median(database as number[]),
        })}`,
      );
    }
    log(
      `  raw guarded UPDATE                 ${figures.rawOpsPerSec.toFixed(0)} ops/s   p50 ${figures.rawP50Ms.toFixed(2)} ms   p99 ${figures.rawP99Ms.toFixed(2)} ms`,
    );
    log(
      `  fencegate, one call per commit     ${figures.singleOpsPerSec.toFixed(0)} ops/s   p50 ${figures.singleP50Ms.toFixed(2)} ms   p99 ${figures.singleP99Ms.toFixed(2)} ms`,
    );
    log(
      `  fencegate, group commit            ${figures.guardedOpsPerSec.toFixed(0)} ops/s   p50 ${figures.guardedP50Ms.toFixed(2)} ms   p99 ${figures.guardedP99Ms.toFixed(2)} ms`,
    );
    log(
      reference === null
        ? '  pgbench (outside reference)       skipped'
        : `  pgbench, same UPDATE, 16 clients   ${reference.tps.toFixed(0)} tps     latency average ${reference.latencyAverageMs.toFixed(2)} ms (guard: fence = 1, no revision)`,
    );
    log(
      `guarded/raw throughput ratio: ${ratio.toFixed(3)} with group commit, ${ratioSingle.toFixed(3)} one call per commit (target >= 0.85)`,
    );
    if (figures.baseline !== null) {
      const b = figures.baseline;
      log(
        `  baseline ${b.commit}, one call per commit ${b.singleOpsPerSec.toFixed(0)} ops/s; group commit ${b.groupOpsPerSec.toFixed(0)} ops/s`,
      );
      log(
        `this tree / baseline ${b.commit}: ${b.singleVsBaseline.toFixed(3)} one call per commit (target >= 1), ${b.groupVsBaseline.toFixed(3)} group commit`,
      );
    }
    if (reference !== null) {
      log(
        `against pgbench: raw ${(figures.rawOpsPerSec / reference.tps).toFixed(3)}, ` +
          `fencegate group commit ${(figures.guardedOpsPerSec / reference.tps).toFixed(3)}, ` +
          `one call per commit ${(figures.singleOpsPerSec / reference.tps).toFixed(3)}`,
      );
    }
    log(`verify after the run: ${verifyViolations} violations`);
    log(JSON.stringify(figures));
    requireClean('commit on PostgreSQL', verifyViolations);
    return figures;
  } finally {
    await single.close();
    await group.close();
    if (baseline !== null) await Promise.all(baseline.map((gate) => gate.close()));
    await checkout?.remove();
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await pool.query(`DROP SCHEMA IF EXISTS ${baselineSchema} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      store: { type: 'string' },
      seconds: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
      'in-flight': { type: 'string', default: '64' },
      pool: { type: 'string', default: '16' },
      'pgbench-seconds': { type: 'string' },
      'baseline-ref': { type: 'string' },
    },
  });
  if (values.store === undefined || !/^postgres(ql)?:\/\//.test(values.store)) {
    console.error(
      'usage: tsx bench/postgres/commit.ts --store postgres://… [--seconds N] [--rounds N] [--in-flight N] [--pool N] [--pgbench-seconds N] [--baseline-ref GIT_REF]',
    );
    return 2;
  }
  await runPostgresCommitBench({
    url: values.store,
    seconds: Number(values.seconds),
    rounds: Number(values.rounds),
    inFlight: Number(values['in-flight']),
    pool: Number(values.pool),
    pgbenchSeconds:
      values['pgbench-seconds'] === undefined ? undefined : Number(values['pgbench-seconds']),
    baselineRef: values['baseline-ref'],
  });
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
