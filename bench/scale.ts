/**
 * Cost as the work grows (SQLite file, group commit, through the library):
 *  - commits/s with 1,000,000 scopes and 10,000,000 records against 1,000 scopes and 10,000
 *    records. The large store is bulk-loaded with raw SQL (a recursive CTE, journal off), then
 *    fencegate commits a new record into a random scope; the small one the same way.
 *    The bulk-loaded stores have rows but no audit history, so `verify` has nothing to check them
 *    against: they are removed after the run.
 *  - a healthy writer's commits/s while other workers send as many stale-fence commits (one per
 *    commit answered: 50 % of the traffic; fences below the current one, as retired workers send)
 *    against the same writer alone, on a store whose scopes were granted through the library, so
 *    `verify` checks it at the end; and the CPU a refusal takes against a commit's, each alone;
 *  - a healthy tenant's commits/s over HTTP while another tenant storms with stale commits at the
 *    server's capacity, the per-tenant rate limit on, against the tenant alone (tenant-isolation.ts);
 *  - server memory: `fencegate` server process under commit load over HTTP (64 connections) for
 *    `--memory-seconds` (600 by default), RSS and the heap it retains (after a full collection)
 *    sampled every 10 s; `verify` checks its file once the server has stopped.
 *
 * `verifyViolations` sums what `verify` found in every store with a history; any fails the run.
 *
 *   npm run bench -- scale [--seconds N] [--scopes N] [--memory-seconds N] [--profile DIR]
 */
import Database from 'better-sqlite3';
import { fork } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Fencegate } from '../src/gate.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { runLoad } from './http/load.js';
import type { MemorySample, ServerReady } from './http/server-process.js';
import { startPhaseProfile } from './phase-profile.js';
import { runConcurrent, type RunStats } from './stats.js';
import { tenantIsolation } from './tenant-isolation.js';
import { requireClean, violationsAt } from './verified-history.js';

export interface ScaleBenchOptions {
  seconds: number;
  /** Scopes of the large store (records: ten per scope). Default 1,000,000. */
  largeScopes: number;
  memorySeconds: number;
  /**
   * Where to write CPU profiles: the stale row's commits alone and refusals alone (this process),
   * and the isolation row's server (its own process, all of its run).
   */
  profileDir?: string;
}

const SMALL_SCOPES = 1000;
const RECORDS_PER_SCOPE = 10;
const IN_FLIGHT = 64;
const HOLDER = 'bench';
const FENCE = 1;
const VALUE = { summary: 'compacted memory of the workflow', n: 0 };

/** Creates the store's schema, then fills scopes and records with raw SQL. */
export async function bulkLoad(path: string, scopes: number): Promise<number> {
  const started = performance.now();
  await SqliteStore.open({ path }).close();
  const db = new Database(path);
  db.pragma('journal_mode = DELETE');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const far = Date.now() + 30 * 86_400_000;
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
     INSERT INTO scopes (tenant, scope, fence, holder, lease_expires_at, policy_version, status, updated_at)
     SELECT 'default', printf('s/%08d', i), ${FENCE}, '${HOLDER}', ${far}, NULL, 'active', 0 FROM n`,
  ).run(scopes);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
     INSERT INTO records (tenant, scope, name, present, value, revision, incarnation, fingerprint, updated_at)
     SELECT 'default', printf('s/%08d', i / ${RECORDS_PER_SCOPE}), printf('r-%d', i % ${RECORDS_PER_SCOPE}),
            1, '{"n":0}', 1, 1, NULL, 0 FROM n`,
  ).run(scopes * RECORDS_PER_SCOPE);
  db.exec('COMMIT');
  db.pragma('journal_mode = WAL');
  db.close();
  return (performance.now() - started) / 1000;
}

async function commitRate(
  path: string,
  scopes: number,
  seconds: number,
  run: string,
): Promise<RunStats> {
  const store = SqliteStore.open({ path, groupCommit: true });
  const gate = await Fencegate.open({ store });
  try {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const commit = async (i: number): Promise<void> => {
      const scope = `s/${String(Math.floor(random() * scopes)).padStart(8, '0')}`;
      const result = await gate.commit({
        scope,
        fence: FENCE,
        operationId: `${run}-${i}`,
        writes: [{ name: `${run}-${i}`, expectRevision: 0, value: { ...VALUE, n: i } }],
      });
      if (result.outcome !== 'committed') throw new Error(`rejected: ${result.error.code}`);
    };
    await runConcurrent(1, IN_FLIGHT, (i) => commit(-1 - i));
    return await runConcurrent(seconds, IN_FLIGHT, commit);
  } finally {
    await gate.close();
  }
}

/**
 * Commits/s on a store of 1,000 scopes against one of `largeScopes` scopes (ten records each),
 * both bulk-loaded in `dir` as `small.db` and `large.db`; two rounds each, interleaved small first
 * so both see the machine alike, the best of each compared.
 */
export async function scopeScaling(dir: string, largeScopes: number, seconds: number) {
  const smallPath = join(dir, 'small.db');
  const largePath = join(dir, 'large.db');
  await bulkLoad(smallPath, SMALL_SCOPES);
  const buildSeconds = await bulkLoad(largePath, largeScopes);
  const small: RunStats[] = [];
  const large: RunStats[] = [];
  for (let round = 0; round < 2; round++) {
    small.push(await commitRate(smallPath, SMALL_SCOPES, seconds, `small-${round}`));
    large.push(await commitRate(largePath, largeScopes, seconds, `large-${round}`));
  }
  const best = (runs: RunStats[]): number => Math.max(...runs.map((r) => r.opsPerSec));
  const worstP99 = (runs: RunStats[]): number => Math.max(...runs.map((r) => r.p99Ms));
  return {
    records: largeScopes * RECORDS_PER_SCOPE,
    buildSeconds,
    smallPerSec: best(small),
    largePerSec: best(large),
    ratio: best(large) / best(small),
    smallP99Ms: worstP99(small),
    largeP99Ms: worstP99(large),
  };
}

/** One run of `op` with the process CPU it took per operation (µs), the sync waits left out. */
async function withCpu(
  seconds: number,
  inFlight: number,
  op: (i: number) => Promise<void>,
): Promise<RunStats & { cpuUsPerOp: number }> {
  const before = process.cpuUsage();
  const stats = await runConcurrent(seconds, inFlight, op);
  const { user, system } = process.cpuUsage(before);
  return { ...stats, cpuUsPerOp: (user + system) / stats.ops };
}

/** `run`, with its V8 CPU profile written to `dir/name.cpuprofile` when `dir` is given. */
async function profiled<T>(
  dir: string | undefined,
  name: string,
  run: () => Promise<T>,
): Promise<T> {
  if (dir === undefined) return await run();
  const profile = await startPhaseProfile();
  try {
    return await run();
  } finally {
    await profile.stop(join(dir, `${name}.cpuprofile`));
  }
}

/**
 * Scopes made through the library, so their grants are in the audit log and `verify` can check
 * the run: each granted to an old holder (fence 1), released, then granted to the bench's writer
 * (fence 2). Stale traffic then carries fence 1, below the current one, as a retired worker's does.
 */
async function grantedScopes(gate: Fencegate, scopes: number): Promise<void> {
  const ttlMs = 3_600_000;
  for (let i = 0; i < scopes; i++) {
    const scope = `s/${String(i).padStart(8, '0')}`;
    const old = await gate.acquire({ scope, holder: 'retired', ttlMs });
    await gate.release({ scope, holder: 'retired', fence: old.fence });
    await gate.acquire({ scope, holder: HOLDER, ttlMs });
  }
}

const CURRENT_FENCE = 2;
const RETIRED_FENCE = 1;

/**
 * Healthy commits/s alone, then with as many stale-fence commits in flight beside them; then the
 * refusals alone, so a refusal's CPU can be set against a commit's (the machine's load moves
 * rates far more than CPU per operation). The store at `path` is created here.
 */
export async function staleTraffic(path: string, seconds: number, profileDir?: string) {
  const store = SqliteStore.open({ path, groupCommit: true });
  const gate = await Fencegate.open({ store });
  try {
    await grantedScopes(gate, SMALL_SCOPES);
    const healthy = async (i: number): Promise<void> => {
      const result = await gate.commit({
        scope: `s/${String(i % SMALL_SCOPES).padStart(8, '0')}`,
        fence: CURRENT_FENCE,
        operationId: `healthy-${i}-${Math.random()}`,
        writes: [{ name: `h-${i}-${Math.random()}`, expectRevision: 0, value: VALUE }],
      });
      if (result.outcome !== 'committed') throw new Error(`rejected: ${result.error.code}`);
    };
    const stale = async (i: number): Promise<void> => {
      const result = await gate.commit({
        scope: `s/${String(i % SMALL_SCOPES).padStart(8, '0')}`,
        fence: RETIRED_FENCE,
        operationId: `stale-${i}-${Math.random()}`,
        writes: [{ name: `x-${i}`, expectRevision: 0, value: VALUE }],
      });
      if (result.outcome !== 'rejected') throw new Error('a stale commit was accepted');
    };
    const half = IN_FLIGHT / 2;
    const alone = await profiled(profileDir, 'stale-commits', () =>
      withCpu(seconds, half, healthy),
    );
    // Half the traffic stale: a stale commit is sent for each healthy commit answered, by as
    // many callers again, so the refusals are as many as the commits whatever each costs.
    const paced = new Pacer();
    const [withStale] = await Promise.all([
      runConcurrent(seconds, half, async (i) => {
        await healthy(i);
        paced.release();
      }),
      runConcurrent(seconds, half, async (i) => {
        await paced.take();
        await stale(i);
      }),
    ]).finally(() => paced.close());
    const refusalsAlone = await profiled(profileDir, 'stale-refusals', () =>
      withCpu(seconds, half, stale),
    );
    const { violations } = await gate.verify();
    return { alone, withStale, refusalsAlone, violations: violations.length };
  } finally {
    await gate.close();
  }
}

/** Permits handed from one set of callers to another, one at a time. */
class Pacer {
  #permits = 0;
  #closed = false;
  readonly #waiting: (() => void)[] = [];

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#permits += 1;
    else next();
  }

  take(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#permits > 0) {
      this.#permits -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Lets every waiting and later caller through (the run is over). */
  close(): void {
    this.#closed = true;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }
}

/** A series of memory samples by its first, middle and last value, MiB. */
export interface MemoryTrend {
  first: number;
  middle: number;
  last: number;
}

/** Growth from the middle sample to the last that still counts as flat, as a share of the middle. */
const FLAT_SHARE = 0.25;

export function memoryTrend(mib: readonly number[]): MemoryTrend & { flat: boolean } {
  const first = mib[0] ?? 0;
  // The first half is warm-up (JIT, page cache, the background verifier filling to its bound);
  // growth after it is what would not stay flat.
  const middle = mib[Math.floor(mib.length / 2)] ?? 0;
  const last = mib.at(-1) ?? 0;
  return { first, middle, last, flat: last - middle <= FLAT_SHARE * middle };
}

/** RSS and retained V8 heap (after a full collection) of a server process under commit load, every 10 s. */
export async function serverMemory(dir: string, seconds: number) {
  const script = fileURLToPath(new URL('./http/server-process.ts', import.meta.url));
  const log = openSync(join(dir, 'memory-server.log'), 'w');
  const child = fork(script, ['fencegate', dir], {
    // The server collects garbage before each sample, so heap is what it retains, not what V8
    // has yet to collect (V8 lets the heap grow far before a full collection under this load).
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', log, 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let measured: { samples: { rssMiB: number; heapMiB: number }[]; requests: number };
  try {
    const ready = await new Promise<ServerReady>((resolve) =>
      child.once('message', (m) => resolve(m as ServerReady)),
    );
    const sample = async (): Promise<{ rssMiB: number; heapMiB: number }> => {
      const answer = new Promise<MemorySample>((resolve) =>
        child.once('message', (m) => resolve(m as MemorySample)),
      );
      child.send('memory');
      const { memory } = await answer;
      return { rssMiB: memory.rss / 2 ** 20, heapMiB: memory.heapUsed / 2 ** 20 };
    };
    const samples = [await sample()];
    let n = 0;
    const body = (): string => {
      n += 1;
      const target = ready.scopes[n % ready.scopes.length] ?? { scope: '', fence: 0 };
      return JSON.stringify({
        scope: target.scope,
        fence: target.fence,
        operationId: `mem-${n}`,
        writes: [{ name: `m-${n}`, expectRevision: 0, value: VALUE }],
      });
    };
    let requests = 0;
    for (let elapsed = 0; elapsed < seconds; elapsed += 10) {
      const result = await runLoad(
        ready.url,
        {
          method: 'POST',
          path: '/v1/commit',
          headers: { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json' },
          body,
        },
        { connections: IN_FLIGHT, seconds: Math.min(10, seconds - elapsed) },
      );
      requests += result.total;
      samples.push(await sample());
    }
    measured = { samples, requests };
  } finally {
    child.kill('SIGTERM');
    await exited;
    closeSync(log);
  }
  // The server has stopped: its file's history, every commit of the run, is complete.
  return { ...measured, violations: await violationsAt(`sqlite:${join(dir, 'fencegate.db')}`) };
}

export async function runScaleBench(options: ScaleBenchOptions): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-scale-'));
  try {
    const scaling = await scopeScaling(dir, options.largeScopes, options.seconds);
    console.log(
      `bulk load: ${options.largeScopes.toLocaleString('en')} scopes and ${scaling.records.toLocaleString('en')} records in ${scaling.buildSeconds.toFixed(1)} s`,
    );
    console.log(
      `commits/s at ${SMALL_SCOPES.toLocaleString('en')} scopes: ${scaling.smallPerSec.toFixed(0)}; at ${options.largeScopes.toLocaleString('en')} scopes / ${scaling.records.toLocaleString('en')} records: ${scaling.largePerSec.toFixed(0)}; ratio ${scaling.ratio.toFixed(2)} (target >= 0.9); p99 ${scaling.smallP99Ms.toFixed(1)} and ${scaling.largeP99Ms.toFixed(1)} ms`,
    );
    const stale = await staleTraffic(join(dir, 'stale.db'), options.seconds, options.profileDir);
    const staleRatio = stale.withStale.opsPerSec / stale.alone.opsPerSec;
    console.log(
      `healthy writer (32 in flight): alone ${stale.alone.opsPerSec.toFixed(0)}/s, with 32 stale-fence commits in flight beside it ${stale.withStale.opsPerSec.toFixed(0)}/s; ratio ${staleRatio.toFixed(2)} (target >= 0.9)`,
    );
    const refusalCpuShare = stale.refusalsAlone.cpuUsPerOp / stale.alone.cpuUsPerOp;
    console.log(
      `CPU per operation, 32 in flight: commit ${stale.alone.cpuUsPerOp.toFixed(1)} µs, stale-fence refusal ${stale.refusalsAlone.cpuUsPerOp.toFixed(1)} µs (${refusalCpuShare.toFixed(2)} of a commit); refusals alone ${stale.refusalsAlone.opsPerSec.toFixed(0)}/s`,
    );
    const isolation = await tenantIsolation(dir, options.seconds, options.profileDir);
    console.log(
      `healthy tenant (16 in flight over HTTP, --tenant-rate ${isolation.rate.perSecond}): alone ${isolation.alone.opsPerSec.toFixed(0)}/s, with another tenant's stale storm on 64 connections ${isolation.withStorm.opsPerSec.toFixed(0)}/s (storm answered ${(isolation.storm.total / options.seconds).toFixed(0)}/s); ratio ${isolation.ratio.toFixed(2)} (target >= 0.9)`,
    );
    const memory = await serverMemory(dir, options.memorySeconds);
    const rss = memory.samples.map((m) => m.rssMiB);
    const heap = memory.samples.map((m) => m.heapMiB);
    const rssTrend = memoryTrend(rss);
    const heapTrend = memoryTrend(heap);
    const list = (mib: number[]): string => mib.map((m) => m.toFixed(0)).join(' ');
    const verifyViolations = stale.violations + isolation.violations + memory.violations;
    console.log(
      `server memory every 10 s over ${options.memorySeconds} s and ${memory.requests.toLocaleString('en')} commits, MiB:\n  RSS            ${list(rss)}\n  heap retained  ${list(heap)}`,
    );
    console.log(`verify after the run: ${verifyViolations} violations`);
    console.log(
      JSON.stringify({
        bench: 'scale',
        largeScopes: options.largeScopes,
        largeRecords: scaling.records,
        bulkLoadSeconds: Math.round(scaling.buildSeconds * 10) / 10,
        smallCommitsPerSec: Math.round(scaling.smallPerSec),
        largeCommitsPerSec: Math.round(scaling.largePerSec),
        scaleRatio: Math.round(scaling.ratio * 1000) / 1000,
        smallP99Ms: Math.round(scaling.smallP99Ms * 10) / 10,
        largeP99Ms: Math.round(scaling.largeP99Ms * 10) / 10,
        healthyAlonePerSec: Math.round(stale.alone.opsPerSec),
        healthyWithStalePerSec: Math.round(stale.withStale.opsPerSec),
        staleRatio: Math.round(staleRatio * 1000) / 1000,
        commitCpuUs: Math.round(stale.alone.cpuUsPerOp * 10) / 10,
        refusalCpuUs: Math.round(stale.refusalsAlone.cpuUsPerOp * 10) / 10,
        refusalsAlonePerSec: Math.round(stale.refusalsAlone.opsPerSec),
        isolationAlonePerSec: Math.round(isolation.alone.opsPerSec),
        isolationWithStormPerSec: Math.round(isolation.withStorm.opsPerSec),
        stormAnsweredPerSec: Math.round(isolation.storm.total / options.seconds),
        tenantRate: isolation.rate.perSecond,
        tenantIsolationRatio: Math.round(isolation.ratio * 1000) / 1000,
        verifyViolations,
        memorySeconds: options.memorySeconds,
        rssFirstMiB: Math.round(rssTrend.first),
        rssMiddleMiB: Math.round(rssTrend.middle),
        rssLastMiB: Math.round(rssTrend.last),
        rssMaxMiB: Math.round(Math.max(...rss)),
        heapFirstMiB: Math.round(heapTrend.first),
        heapMiddleMiB: Math.round(heapTrend.middle),
        heapLastMiB: Math.round(heapTrend.last),
        memoryFlat: rssTrend.flat && heapTrend.flat,
      }),
    );
    requireClean('scale', verifyViolations);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
