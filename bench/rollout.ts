/**
 * Rollback benchmark: how long a rollout's rollback takes to fence every scope it moved, and what
 * it costs the commits of the scopes it does not touch. For each size, a fresh store with that
 * many scopes pinned to v7, and a hundredth more, and a rollout whose first step ramps v8 to 99 %
 * of them (a rollout at 100 % is completed, and a completed rollout is not rolled back); then
 * writers commit without pause on other scopes (outside the rollout's selection) through three
 * windows of the same length: one before, one containing the rollback, one after. Reported:
 *
 *   - fencedMs: from the rollback call to the rollback cutover's completion as the store recorded
 *     it (the last moved scope fenced); callMs: until the call returned;
 *   - startMs: the step's start transaction alone (its list is built afterwards, page by page),
 *     and stepMs the whole step, start, listing and moves;
 *   - windowRatio: commits on the other scopes in the window with the rollback over their mean
 *     in the two windows without one (a window is stretched to hold a rollback that outlasts it,
 *     and the ratio is then of rates per second).
 *
 *   npm run bench -- rollout [--store postgres://…] [--scopes N[,N…]] [--seconds N]
 *
 * runs SQLite, then PostgreSQL (`--store`, or the local server), each at every size.
 *
 * SQLite runs on a temporary file with the store's defaults and group commit (as the server runs
 * it); PostgreSQL in a schema of its own, created for the run and dropped afterwards. Before each
 * store is closed, `verify` replays the history its run wrote.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Fencegate } from '../src/gate.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { parsePostgresUrl } from '../src/store/postgres/postgres-url.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { violationsIn } from './verified-history.js';

export interface RolloutBenchOptions {
  /** 'sqlite' (a temp file, the default) or a `postgres://…` URL. */
  store?: string;
  /** Scopes the rollout moves, one run each. Default 10,000 and 100,000. */
  sizes?: number[];
  /** Length of each commit window. Default 10 s. */
  seconds?: number;
  log?: (line: string) => void;
}

export interface RolloutBenchRow {
  /** Scopes the step moved and the rollback moved back. */
  scopes: number;
  /**
   * The step's start alone: the one transaction that records the rollout and its step's cutover,
   * before any page of its list (it used to list the whole selection).
   */
  startMs: number;
  /** The one step moving every scope to v8, its start, its listing and its moves (setup). */
  stepMs: number;
  fencedMs: number;
  callMs: number;
  /** Commits on the other scopes per window: before, with the rollback, after. */
  commits: { before: number; during: number; after: number };
  duringSeconds: number;
  windowRatio: number;
  targetMs: number;
  fencedWithinTarget: boolean;
  ratioWithinTarget: boolean;
  /** Violations `verify` found in the history of the run's store afterwards. */
  verifyViolations: number;
}

export interface RolloutBenchResult {
  bench: 'rollout';
  store: 'sqlite' | 'postgres';
  seconds: number;
  writers: number;
  rows: RolloutBenchRow[];
  /** The rows' violations together: 0 when every run's history verified clean. */
  verifyViolations: number;
}

/** Targets: ms per 10,000 moved scopes, and the commit ratio of the unaffected scopes. */
const TARGET_MS_PER_10K = { sqlite: 1000, postgres: 2000 } as const;
const TARGET_RATIO = 0.8;
/** Writers committing on scopes outside the rollout, each on its own scope, back to back. */
const WRITERS = 16;
/** The first step's percent: about `scopes` of `scopes / 0.99` are moved. */
const RAMP = 99;
/** Acquires in flight while the moved scopes are prepared. */
const SETUP_BATCH = 500;
const HOUR = 3_600_000;

async function prepare(gate: Fencegate, moved: number): Promise<void> {
  const scopes = Math.round((moved * 100) / RAMP);
  for (const version of ['v7', 'v8']) await gate.registerPolicy({ version });
  for (let start = 0; start < scopes; start += SETUP_BATCH) {
    const batch = Array.from({ length: Math.min(SETUP_BATCH, scopes - start) }, (_, i) => i);
    // Each scope is pinned to v7 by a first acquire and left released, as a workflow between
    // two jobs is.
    await Promise.all(
      batch.map(async (i) => {
        const scope = `wf-${start + i}/memory`;
        const grant = await gate.acquire({
          scope,
          holder: 'v7-worker',
          ttlMs: HOUR,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'v7-worker', fence: grant.fence });
      }),
    );
  }
}

/** Writers on `other-<n>` scopes: each holds its own and commits a new revision, back to back. */
class Writers {
  #running = false;
  #loops: Promise<void>[] = [];
  #commits = 0;
  readonly #gate: Fencegate;
  readonly #grants: { scope: string; fence: number; revision: number }[] = [];

  constructor(gate: Fencegate) {
    this.#gate = gate;
  }

  async acquire(): Promise<void> {
    for (let i = 0; i < WRITERS; i++) {
      const scope = `other-${i}`;
      const grant = await this.#gate.acquire({
        scope,
        holder: `writer-${i}`,
        ttlMs: HOUR,
        policyVersion: 'v7',
      });
      this.#grants.push({ scope, fence: grant.fence, revision: 0 });
    }
  }

  start(): void {
    this.#running = true;
    this.#loops = this.#grants.map((grant) => this.#loop(grant));
  }

  /** Commits accepted since the last call. */
  take(): number {
    const commits = this.#commits;
    this.#commits = 0;
    return commits;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  async #loop(grant: { scope: string; fence: number; revision: number }): Promise<void> {
    let n = 0;
    while (this.#running) {
      const result = await this.#gate.commit({
        scope: grant.scope,
        fence: grant.fence,
        operationId: `${grant.scope}-${grant.fence}-${++n}`,
        writes: [{ name: 'state', expectRevision: grant.revision, value: { n } }],
      });
      if (result.outcome !== 'committed') {
        throw new Error(`a writer's commit was rejected: ${result.error.code}`);
      }
      grant.revision = result.records[0]!.revision;
      this.#commits += 1;
    }
  }
}

async function window(writers: Writers, seconds: number): Promise<number> {
  writers.take();
  await sleep(seconds * 1000);
  return writers.take();
}

async function measure(
  store: Store,
  kind: 'sqlite' | 'postgres',
  scopes: number,
  seconds: number,
  log: (line: string) => void,
): Promise<RolloutBenchRow> {
  const gate = await Fencegate.open({ store });
  const writers = new Writers(gate);
  try {
    await prepare(gate, scopes);
    await writers.acquire();
    log(`  ${scopes} scopes prepared`);
    const request = {
      rolloutId: 'bench',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [RAMP, 100],
    };
    let start = performance.now();
    await store.changeRollout(gate.tenant, { action: 'start', request });
    const startMs = performance.now() - start;
    // The same start again resumes the step: its list, page by page, then its chunks.
    const rollout = await gate.rollouts.start(request);
    const stepMs = performance.now() - start;
    if (rollout.status !== 'running') throw new Error(`the ramp ended ${rollout.status}`);

    writers.start();
    const before = await window(writers, seconds);
    // The rollback starts a tenth into its window, so the window holds it whole when it fits.
    const lead = seconds / 10;
    await sleep(lead * 1000);
    const decidedAt = Date.now();
    start = performance.now();
    await gate.rollouts.rollback({ rolloutId: 'bench' });
    const callMs = performance.now() - start;
    const rest = Math.max(seconds - lead - callMs / 1000, 0.1 * seconds);
    await sleep(rest * 1000);
    const during = writers.take();
    const duringSeconds = lead + callMs / 1000 + rest;
    const after = await window(writers, seconds);
    await writers.stop();

    const cutover = await store.getCutover(gate.tenant, 'bench/rollback');
    if (cutover?.completedAt == null) throw new Error('the rollback did not complete');
    const moved = (await store.getCutover(gate.tenant, 'bench/step-1'))?.fences.length ?? 0;
    if (cutover.fences.length !== moved) {
      throw new Error(`the rollback moved ${cutover.fences.length} of ${moved} scopes`);
    }
    const fencedMs = cutover.completedAt - decidedAt;
    const windowRatio = during / duringSeconds / ((before + after) / (2 * seconds));
    const targetMs = (TARGET_MS_PER_10K[kind] * scopes) / 10_000;
    return {
      scopes: moved,
      startMs: Math.round(startMs),
      stepMs: Math.round(stepMs),
      fencedMs,
      callMs: Math.round(callMs),
      commits: { before, during, after },
      duringSeconds: Math.round(duringSeconds * 100) / 100,
      windowRatio: Math.round(windowRatio * 1000) / 1000,
      targetMs,
      fencedWithinTarget: fencedMs <= targetMs,
      ratioWithinTarget: windowRatio >= TARGET_RATIO,
      verifyViolations: await violationsIn(store),
    };
  } finally {
    await writers.stop().catch(() => undefined);
    await gate.close();
  }
}

async function runSqlite(size: number, seconds: number, log: (line: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-rollout-'));
  try {
    const store = SqliteStore.open({ path: join(dir, 'fencegate.db'), groupCommit: true });
    return await measure(store, 'sqlite', size, seconds, log);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runPostgres(url: string, size: number, seconds: number, log: (l: string) => void) {
  const schema = `fencegate_bench_rollout_${randomBytes(4).toString('hex')}`;
  try {
    const store = await PostgresStore.open({ url, schema, groupCommit: true });
    return await measure(store, 'postgres', size, seconds, log);
  } finally {
    const client = new pg.Client({ connectionString: parsePostgresUrl(url).connectionString });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

export async function runRolloutBench(
  options: RolloutBenchOptions = {},
): Promise<RolloutBenchResult> {
  const url = options.store ?? 'sqlite';
  const store = /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
  if (store === 'sqlite' && url !== 'sqlite') {
    throw new Error(`store must be 'sqlite' or a postgres:// URL, got ${url}`);
  }
  const seconds = options.seconds ?? 10;
  const log = options.log ?? ((line: string) => console.error(line));
  const rows: RolloutBenchRow[] = [];
  for (const size of options.sizes ?? [10_000, 100_000]) {
    log(`rollback of ${size} scopes on ${store}`);
    rows.push(
      store === 'postgres'
        ? await runPostgres(url, size, seconds, log)
        : await runSqlite(size, seconds, log),
    );
  }
  const verifyViolations = rows.reduce((sum, row) => sum + row.verifyViolations, 0);
  return { bench: 'rollout', store, seconds, writers: WRITERS, rows, verifyViolations };
}

export function formatRolloutBench(result: RolloutBenchResult): string {
  const where = result.store === 'postgres' ? 'PostgreSQL' : 'SQLite';
  const lines = [
    `rollback on ${where}: ${result.writers} writers on other scopes, windows of ${result.seconds} s`,
  ];
  for (const row of result.rows) {
    const met = (ok: boolean): string => (ok ? 'met' : 'MISSED');
    lines.push(
      `  ${row.scopes} scopes moved back`,
      `    rollback call -> last scope fenced   ${row.fencedMs} ms (call returned ${row.callMs} ms; target <= ${row.targetMs} ms: ${met(row.fencedWithinTarget)})`,
      `    the step that moved them             ${row.stepMs} ms (its start transaction ${row.startMs} ms)`,
      `    other scopes' commits per window     ${row.commits.before} before, ${row.commits.during} with the rollback (${row.duringSeconds} s), ${row.commits.after} after`,
      `    ratio with / without the rollback    ${row.windowRatio.toFixed(2)} (target >= ${TARGET_RATIO}: ${met(row.ratioWithinTarget)})`,
      `    verify after the run                 ${row.verifyViolations} violations`,
    );
  }
  lines.push(JSON.stringify(result), '');
  return lines.join('\n');
}
