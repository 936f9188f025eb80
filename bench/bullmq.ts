/**
 * BullMQ benchmark: jobs per second through a plain BullMQ worker and through fencedProcessor,
 * on the same Redis and SQLite files, in one run. Three workers, the same jobs:
 *
 *  - plain, no-op: BullMQ alone (its per-job cost, for context);
 *  - plain, raw write (the baseline): the job writes its result with a prepared INSERT in its own
 *    transaction, unguarded, on a WAL file with the same `synchronous` as the store;
 *  - fenced: fencedProcessor with one commit per job: acquire the job's scope (with the ledger's
 *    reserved+running), then the commit with `release: true`, which releases the scope and records
 *    the ledger's succeeded in its transaction: two store operations a job.
 *
 *   npm run bench -- bullmq [--jobs N] [--concurrency N]
 *
 * Each round adds `jobs` jobs to a fresh queue (not timed), starts one worker and times until the
 * last job completed; rounds interleave the three workers, three of each, and the figures are
 * medians. Every job has a scope of its own. Run once with synchronous=full (the default) and
 * once with synchronous=normal. Redis (through ioredis): FENCEGATE_REDIS_URL or 127.0.0.1:6379.
 * After each setting's rounds, `verify` replays the fencegate file's history (the raw file is a
 * plain table).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Queue, Worker, type Processor } from 'bullmq';
import { Redis } from 'ioredis';
import { Fencegate } from '../src/gate.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { fencedProcessor } from '../src/integrations/bullmq/index.js';
import { violationsIn } from './verified-history.js';

export interface BullmqBenchOptions {
  jobs?: number;
  concurrency?: number;
}

export interface BullmqBenchFigures {
  synchronous: 'full' | 'normal';
  noopJobsPerSec: number;
  rawJobsPerSec: number;
  fencedJobsPerSec: number;
  /** fenced / raw write: what fencing costs a job that writes its result anyway. */
  ratio: number;
  /** CPU time of this process per job (user + system), medians: less noisy than rates under load. */
  rawCpuUsPerJob: number;
  fencedCpuUsPerJob: number;
  /** Violations `verify` found in the fencegate file's history after the rounds. */
  verifyViolations: number;
}

export interface BullmqBenchResult {
  jobs: number;
  concurrency: number;
  runs: BullmqBenchFigures[];
  /** The runs' violations together: 0 when both settings' histories verified clean. */
  verifyViolations: number;
}

const ROUNDS = 3;

export async function runBullmqBench(options: BullmqBenchOptions = {}): Promise<BullmqBenchResult> {
  const jobs = options.jobs ?? 1000;
  const concurrency = options.concurrency ?? 16;
  const runs: BullmqBenchFigures[] = [];
  for (const synchronous of ['full', 'normal'] as const) {
    runs.push(await runOneSetting(jobs, concurrency, synchronous));
  }
  const verifyViolations = runs.reduce((sum, run) => sum + run.verifyViolations, 0);
  return { jobs, concurrency, runs, verifyViolations };
}

async function runOneSetting(
  jobs: number,
  concurrency: number,
  synchronous: 'full' | 'normal',
): Promise<BullmqBenchFigures> {
  const redisUrl = process.env.FENCEGATE_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const connections: Redis[] = [];
  const connect = () => {
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    connections.push(connection);
    return connection;
  };
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-bullmq-'));
  const gate = await Fencegate.open({
    store: SqliteStore.open({
      path: join(dir, 'bullmq.db'),
      synchronous: synchronous === 'full' ? 'FULL' : 'NORMAL',
      // As `fencegate serve` runs it: concurrent jobs' transactions share one write and one sync.
      groupCommit: true,
    }),
  });
  const raw = new Database(join(dir, 'raw.db'));
  raw.pragma('journal_mode = WAL');
  raw.pragma(`synchronous = ${synchronous}`);
  raw.exec('CREATE TABLE results (round INTEGER, n INTEGER, value TEXT, PRIMARY KEY (round, n))');
  const insert = raw.prepare('INSERT INTO results (round, n, value) VALUES (?, ?, ?)');
  const figures = { noop: [] as number[], raw: [] as number[], fenced: [] as number[] };
  const cpu = { noop: [] as number[], raw: [] as number[], fenced: [] as number[] };
  let verifyViolations: number;
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const time = async (label: keyof typeof figures, processor: Processor<{ n: number }>) => {
        const timed = await timeQueue(
          `${synchronous}-${label}-${round}`,
          jobs,
          concurrency,
          connect,
          processor,
        );
        figures[label].push(timed.jobsPerSec);
        cpu[label].push(timed.cpuUsPerJob);
      };
      await time('noop', () => Promise.resolve());
      await time('raw', (job) => {
        insert.run(round, job.data.n, JSON.stringify({ n: job.data.n }));
        return Promise.resolve();
      });
      await time(
        'fenced',
        fencedProcessor<{ n: number }>(
          gate,
          { scope: (job) => `bench-${round}/${job.data.n}`, policyVersion: 'v1' },
          async (job, ctx) => {
            const result = await ctx.commit({
              writes: [{ name: 'result', expectRevision: 0, value: { n: job.data.n } }],
              release: true,
            });
            if (result.outcome !== 'committed') throw new Error(result.error.code);
          },
        ),
      );
    }
    verifyViolations = await violationsIn(gate.store);
  } finally {
    await gate.close();
    raw.close();
    for (const connection of connections) await connection.quit().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  const rawJobsPerSec = median(figures.raw);
  const fencedJobsPerSec = median(figures.fenced);
  return {
    synchronous,
    noopJobsPerSec: median(figures.noop),
    rawJobsPerSec,
    fencedJobsPerSec,
    ratio: fencedJobsPerSec / rawJobsPerSec,
    rawCpuUsPerJob: median(cpu.raw),
    fencedCpuUsPerJob: median(cpu.fenced),
    verifyViolations,
  };
}

async function timeQueue(
  label: string,
  jobs: number,
  concurrency: number,
  connect: () => Redis,
  processor: Processor<{ n: number }>,
): Promise<{ jobsPerSec: number; cpuUsPerJob: number }> {
  const name = `fencegate-bench-${process.pid}-${label}`;
  const queue = new Queue<{ n: number }>(name, { connection: connect() });
  await queue.addBulk(Array.from({ length: jobs }, (_, n) => ({ name: 'job', data: { n } })));
  let done = 0;
  let failed = 0;
  let allSettled: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allSettled = resolve));
  const settle = () => {
    if (done + failed === jobs) allSettled();
  };
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  const worker = new Worker<{ n: number }>(name, processor, { connection: connect(), concurrency });
  worker.on('completed', () => {
    done += 1;
    settle();
  });
  worker.on('failed', () => {
    failed += 1;
    settle();
  });
  await finished;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuUsed = process.cpuUsage(cpuBefore);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  if (failed > 0) throw new Error(`${failed} of ${jobs} ${label} jobs failed`);
  return { jobsPerSec: jobs / seconds, cpuUsPerJob: (cpuUsed.user + cpuUsed.system) / jobs };
}

function cpuPair(run: BullmqBenchFigures): string {
  const ratio = run.fencedCpuUsPerJob / run.rawCpuUsPerJob;
  return `${run.rawCpuUsPerJob.toFixed(0)} / ${run.fencedCpuUsPerJob.toFixed(0)} (×${ratio.toFixed(2)})`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export function formatBullmqBench(result: BullmqBenchResult): string {
  const rate = (value: number) => `${value.toFixed(0).padStart(7)} jobs/s`;
  const lines = [
    `${result.jobs} jobs, concurrency ${result.concurrency}, medians of ${ROUNDS} rounds`,
  ];
  for (const run of result.runs) {
    lines.push(
      `synchronous=${run.synchronous}`,
      `  plain BullMQ worker, no-op          ${rate(run.noopJobsPerSec)}`,
      `  plain BullMQ worker, raw write      ${rate(run.rawJobsPerSec)}`,
      `  fencedProcessor, one commit         ${rate(run.fencedJobsPerSec)}`,
      `  fenced / raw write                  ${run.ratio.toFixed(2).padStart(7)}`,
      `  CPU µs a job, raw / fenced          ${cpuPair(run)}`,
      `  verify after the rounds             ${String(run.verifyViolations).padStart(7)} violations`,
    );
  }
  lines.push(JSON.stringify(result));
  return lines.join('\n');
}
