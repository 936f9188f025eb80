/**
 * SQLite commit benchmark: a raw guarded UPDATE against fencegate's commit on the same file
 * settings, in one run. The raw statement is the hand-written guard of a user table
 * (`UPDATE … WHERE rev = ? AND fence = ?`) with nothing else: no scope lookup, no lease, no
 * stored outcome, no audit. Each fencegate file is verified before it is closed.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Fencegate } from '../src/gate.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { WAL_AUTOCHECKPOINT_PAGES, type Synchronous } from '../src/store/sqlite/sqlite-database.js';
import { formatStats, runConcurrent, runSequential, type RunStats } from './stats.js';
import { requireClean, violationsIn } from './verified-history.js';

const SCOPES = 64;
/**
 * Each run first spends this long on its own file unmeasured, so every contender is measured
 * with its code compiled and its file warm; without it the first run of a path (group commit
 * under FULL, the first group run) pays the JIT's warm-up that later runs do not.
 */
const WARM_UP_SECONDS = 0.5;
const VALUE = { summary: 'compacted memory of the workflow', facts: ['a', 'b', 'c'], n: 0 };

function rawSetup(path: string, synchronous: Synchronous): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.exec(
    `CREATE TABLE IF NOT EXISTS memory (id TEXT PRIMARY KEY, value TEXT, rev INTEGER, fence INTEGER) WITHOUT ROWID`,
  );
  const insert = db.prepare('INSERT OR REPLACE INTO memory VALUES (?, ?, 0, 1)');
  for (let i = 0; i < SCOPES; i++) insert.run(`wf-${i}/memory`, '{}');
  return db;
}

async function rawRun(path: string, synchronous: Synchronous, seconds: number): Promise<RunStats> {
  const db = rawSetup(path, synchronous);
  const update = db.prepare(
    'UPDATE memory SET value = ?, rev = rev + 1 WHERE id = ? AND rev = ? AND fence = ?',
  );
  const revs = new Array<number>(SCOPES).fill(0);
  const run = (i: number): void => {
    const s = i % SCOPES;
    const changes = update.run(
      JSON.stringify({ ...VALUE, n: i }),
      `wf-${s}/memory`,
      revs[s],
      1,
    ).changes;
    if (changes !== 1) throw new Error('raw update lost its guard');
    revs[s] = (revs[s] ?? 0) + 1;
  };
  await runSequential(WARM_UP_SECONDS, run);
  const stats = await runSequential(seconds, run);
  db.close();
  return stats;
}

async function guardedSetup(path: string, synchronous: Synchronous, groupCommit: boolean) {
  const store = SqliteStore.open({ path, synchronous, groupCommit });
  const gate = await Fencegate.open({ store });
  const fences: number[] = [];
  for (let i = 0; i < SCOPES; i++) {
    const grant = await gate.acquire({
      scope: `wf-${i}/memory`,
      holder: 'bench',
      ttlMs: 86_400_000,
    });
    fences.push(grant.fence);
  }
  return { gate, fences, revs: new Array<number>(SCOPES).fill(0) };
}

function commitOp(ctx: Awaited<ReturnType<typeof guardedSetup>>, run: string) {
  return async (i: number): Promise<void> => {
    const s = i % SCOPES;
    const expectRevision = ctx.revs[s] ?? 0;
    ctx.revs[s] = expectRevision + 1;
    const result = await ctx.gate.commit({
      scope: `wf-${s}/memory`,
      fence: ctx.fences[s] ?? 0,
      operationId: `${run}-${i}`,
      writes: [{ name: 'memory', expectRevision, value: { ...VALUE, n: i } }],
    });
    if (result.outcome !== 'committed')
      throw new Error(`bench commit rejected: ${result.error.code}`);
  };
}

/** A run's figures and the violations `verify` found in its file afterwards. */
type VerifiedRun = RunStats & { violations: number };

async function guardedRun(
  path: string,
  synchronous: Synchronous,
  seconds: number,
): Promise<VerifiedRun> {
  const ctx = await guardedSetup(path, synchronous, false);
  await runSequential(WARM_UP_SECONDS, commitOp(ctx, 'seq-warm'));
  const stats = await runSequential(seconds, commitOp(ctx, 'seq'));
  const violations = await violationsIn(ctx.gate.store);
  await ctx.gate.close();
  return { ...stats, violations };
}

/** Group commit: each lane owns scopes lane, lane+64, … so its expected revisions stay exact. */
async function groupRun(
  path: string,
  synchronous: Synchronous,
  seconds: number,
  inFlight: number,
): Promise<VerifiedRun> {
  const ctx = await guardedSetup(path, synchronous, true);
  const lanes = new Array<number>(inFlight).fill(0);
  let next = 0;
  const phase = (run: string, phaseSeconds: number): Promise<RunStats> => {
    const commit = commitOp(ctx, run);
    return runConcurrent(phaseSeconds, inFlight, async () => {
      const lane = next++ % inFlight;
      const i = lane + inFlight * (lanes[lane] ?? 0);
      lanes[lane] = (lanes[lane] ?? 0) + 1;
      await commit(i);
    });
  };
  await phase('group-warm', WARM_UP_SECONDS);
  const stats = await phase('group', seconds);
  const violations = await violationsIn(ctx.gate.store);
  await ctx.gate.close();
  return { ...stats, violations };
}

export interface SqliteCommitBenchOptions {
  seconds?: number;
  inFlight?: number;
}

export async function runSqliteCommitBench(
  options: SqliteCommitBenchOptions = {},
): Promise<Record<string, number>> {
  const seconds = options.seconds ?? 3;
  const inFlight = options.inFlight ?? 64;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-'));
  const file = (name: string): string => join(dir, `${name}.db`);
  try {
    const rawNormal = await rawRun(file('raw-normal'), 'NORMAL', seconds);
    const guardedNormal = await guardedRun(file('fg-normal'), 'NORMAL', seconds);
    const rawFull = await rawRun(file('raw-full'), 'FULL', seconds);
    const guardedFull = await guardedRun(file('fg-full'), 'FULL', seconds);
    const groupFull = await groupRun(file('fg-group'), 'FULL', seconds, inFlight);
    const groupNormal = await groupRun(file('fg-group-normal'), 'NORMAL', seconds, inFlight);
    console.log(formatStats('raw UPDATE, synchronous=NORMAL', rawNormal));
    console.log(formatStats('fencegate commit, synchronous=NORMAL', guardedNormal));
    console.log(formatStats('raw UPDATE, synchronous=FULL', rawFull));
    console.log(formatStats('fencegate commit, synchronous=FULL', guardedFull));
    console.log(formatStats(`fencegate group commit, FULL, ${inFlight} in flight`, groupFull));
    console.log(formatStats(`fencegate group commit, NORMAL, ${inFlight} in flight`, groupNormal));
    const summary = {
      ratio: guardedNormal.opsPerSec / rawNormal.opsPerSec,
      ratioFull: guardedFull.opsPerSec / rawFull.opsPerSec,
      groupOverRawFull: groupFull.opsPerSec / rawFull.opsPerSec,
      groupRatioNormal: groupNormal.opsPerSec / rawNormal.opsPerSec,
      rawNormalOps: Math.round(rawNormal.opsPerSec),
      guardedNormalOps: Math.round(guardedNormal.opsPerSec),
      rawFullOps: Math.round(rawFull.opsPerSec),
      guardedFullOps: Math.round(guardedFull.opsPerSec),
      groupFullOps: Math.round(groupFull.opsPerSec),
      groupNormalOps: Math.round(groupNormal.opsPerSec),
      verifyViolations: [guardedNormal, guardedFull, groupFull, groupNormal].reduce(
        (sum, run) => sum + run.violations,
        0,
      ),
    };
    console.log(
      `guarded/raw NORMAL ${summary.ratio.toFixed(2)} one at a time (target >= 0.35), ${summary.groupRatioNormal.toFixed(2)} with group commit (target >= 0.60)   group FULL / raw FULL ${summary.groupOverRawFull.toFixed(2)} (target >= 3), / raw NORMAL ${(groupFull.opsPerSec / rawNormal.opsPerSec).toFixed(2)} (target >= 0.45)`,
    );
    console.log(`verify after the run: ${summary.verifyViolations} violations`);
    console.log(JSON.stringify(summary));
    requireClean('commit', summary.verifyViolations);
    return summary;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
