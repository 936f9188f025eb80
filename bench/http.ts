/**
 * HTTP benchmark: `POST /v1/commit` (a distinct record and operationId per request, over 64
 * scopes) against the same server's no-op route (`GET /healthz`), 64 connections, with the load
 * generator (autocannon) in this process and the server in a child process with its default
 * settings (JSON logs at info to a file, group commit on a durable SQLite file, metrics). Then
 * the same two routes on the hand-written reference (bare Fastify + one guarded SQLite
 * transaction per request, bench/http/bare-server.ts), in the same run.
 *
 *   npm run bench -- http [--seconds N] [--connections N] [--profile DIR]
 *
 * `--profile DIR` writes the fencegate server's V8 CPU profile there (`node --cpu-prof`);
 * `npx tsx bench/profile-summary.ts FILE` sums it by component.
 * Every series also shows the server process's CPU time (user + system) per answered request,
 * which other work on the machine moves less than the rates (compare it within one run).
 * The last line printed is one JSON object with `ratio` (commit/no-op ops/s), both p99s, the
 * CPU figures and `verifyViolations`: what `verify` found in the histories of the server's file and
 * of the in-process baseline's, once both have stopped.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InProcessGroupCommit, measureCoalesced, type CallerRate } from './http/coalesced.js';
import { runLoad, type LoadRequest, type LoadResult } from './http/load.js';
import type { CpuSample, ServerReady } from './http/server-process.js';
import { requireClean, violationsAt } from './verified-history.js';

export interface HttpBenchOptions {
  seconds: number;
  connections: number;
  /** Interleaved rounds (default 3). */
  rounds?: number;
  profileDir?: string;
}

/** The figures of a run, as its last line prints them. */
export interface HttpBenchFigures {
  ratio: number;
  commitPerSec: number;
  noopPerSec: number;
  commitP99Ms: number;
  bareCommitP99Ms: number;
  bareRatio: number;
  /** 64 callers on one coalescing client, over in-process group commits on SQLite FULL. */
  coalescedRatio: number;
  coalescedOverNoop: number;
  /** The coalesced rate over the bare Fastify + guarded SQLite service (NORMAL). */
  coalescedOverBare: number;
}

const SERVER_SCRIPT = fileURLToPath(new URL('./http/server-process.ts', import.meta.url));

export async function runHttpBench(options: HttpBenchOptions): Promise<HttpBenchFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-http-'));
  const servers: ChildServer[] = [];
  let inProcess: InProcessGroupCommit | undefined;
  try {
    inProcess = await InProcessGroupCommit.open(dir, SCOPES);
    servers.push(await startChild('fencegate', dir, options));
    servers.push(await startChild('bare', dir, options));
    const [fencegate, bare] = servers as [ChildServer, ChildServer];
    const load = { connections: options.connections, seconds: options.seconds };
    const rounds = options.rounds ?? ROUNDS;
    // Warm-up: JIT, connections, the first WAL pages.
    for (const server of servers) {
      await runLoad(server.ready.url, NOOP, { ...load, seconds: 1 });
      await runLoad(server.ready.url, commitRequest(server.ready, `${server.mode}-warm`), {
        ...load,
        seconds: 1,
      });
    }
    // Interleaved rounds, so a change in the machine's load hits every series alike.
    const runs = { fgNoop: [], fgCommit: [], bareNoop: [], bareCommit: [] } as Record<
      'fgNoop' | 'fgCommit' | 'bareNoop' | 'bareCommit',
      MeasuredLoad[]
    >;
    const coalescedRuns: MeasuredRate[] = [];
    const inProcessRuns: CallerRate[] = [];
    await measureCoalesced(fencegate.ready, options.connections, 1, 'coalesced-warm');
    await inProcess.measure(options.connections, 1, 'in-process-warm');
    for (let round = 0; round < rounds; round++) {
      runs.fgNoop.push(await measureLoad(fencegate, NOOP, load));
      runs.fgCommit.push(
        await measureLoad(fencegate, commitRequest(fencegate.ready, `fg-${round}`), load),
      );
      runs.bareNoop.push(await measureLoad(bare, NOOP, load));
      runs.bareCommit.push(
        await measureLoad(bare, commitRequest(bare.ready, `bare-${round}`), load),
      );
      coalescedRuns.push(
        await withCpu(fencegate, () =>
          measureCoalesced(
            fencegate.ready,
            options.connections,
            options.seconds,
            `coalesced-${round}`,
          ),
        ),
      );
      inProcessRuns.push(
        await inProcess.measure(options.connections, options.seconds, `in-process-${round}`),
      );
    }
    const coalesced = medianRate(coalescedRuns);
    const inProcessRate = medianRate(inProcessRuns);
    const fgNoop = median(runs.fgNoop);
    const fgCommit = median(runs.fgCommit);
    const bareNoop = median(runs.bareNoop);
    const bareCommit = median(runs.bareCommit);
    const line = (label: string, result: MeasuredLoad): string =>
      `${label.padEnd(46)} ${result.requestsPerSec.toFixed(0).padStart(7)} req/s   p50 ${result.p50Ms.toFixed(1)} ms   p99 ${result.p99Ms.toFixed(1)} ms   server CPU ${result.cpuMicrosPerRequest.toFixed(0)} µs/req (busy ${percent(result.serverBusy)}, load generator ${percent(result.loadGeneratorBusy)} of a core)   failures ${result.failures}`;
    console.log(`${rounds} interleaved rounds of ${options.seconds} s, medians:`);
    console.log(line('fencegate GET /healthz (no-op)', fgNoop));
    console.log(line('fencegate POST /v1/commit', fgCommit));
    console.log(line('bare Fastify GET /healthz (no-op)', bareNoop));
    console.log(line('bare Fastify + guarded SQLite POST /v1/commit', bareCommit));
    console.log(
      `${options.connections} callers on one coalescing client (POST /v1/commits): ` +
        `${Math.round(coalesced.commitsPerSec)} commits/s (${coalesced.failures} failed), ` +
        `server CPU ${coalesced.cpuMicrosPerCommit.toFixed(0)} µs/commit (busy ${percent(coalesced.serverBusy)}, ` +
        `client ${percent(coalesced.clientBusy)} of a core); ` +
        `in process, group commit on SQLite FULL: ${Math.round(inProcessRate.commitsPerSec)} commits/s`,
    );
    const ratio = fgCommit.requestsPerSec / fgNoop.requestsPerSec;
    const bareRatio = bareCommit.requestsPerSec / bareNoop.requestsPerSec;
    const coalescedRatio = coalesced.commitsPerSec / inProcessRate.commitsPerSec;
    const coalescedOverNoop = coalesced.commitsPerSec / fgNoop.requestsPerSec;
    const coalescedOverBare = coalesced.commitsPerSec / bareCommit.requestsPerSec;
    console.log(
      `coalesced/in-process ${coalescedRatio.toFixed(2)} (target >= 0.80), ` +
        `coalesced/no-op ${coalescedOverNoop.toFixed(2)}, ` +
        `coalesced/bare commit ${coalescedOverBare.toFixed(2)} (target >= 1.50)`,
    );
    console.log(
      `commit/no-op: fencegate ${ratio.toFixed(2)} (target >= 0.50), bare ${bareRatio.toFixed(2)}; ` +
        `commit p99: fencegate ${fgCommit.p99Ms} ms, bare ${bareCommit.p99Ms} ms`,
    );
    const figures: HttpBenchFigures = {
      ratio: round(ratio),
      commitPerSec: Math.round(fgCommit.requestsPerSec),
      noopPerSec: Math.round(fgNoop.requestsPerSec),
      commitP99Ms: fgCommit.p99Ms,
      bareCommitP99Ms: bareCommit.p99Ms,
      bareRatio: round(bareRatio),
      coalescedRatio: round(coalescedRatio),
      coalescedOverNoop: round(coalescedOverNoop),
      coalescedOverBare: round(coalescedOverBare),
    };
    // The histories the run wrote must still prove every invariant, as `fencegate verify` checks
    // them: the server's file and the in-process baseline's, each once its writer has stopped.
    for (const server of servers.splice(0)) await server.stop();
    await inProcess.close();
    inProcess = undefined;
    const verifyViolations =
      (await violationsAt(`sqlite:${join(dir, 'fencegate.db')}`)) +
      (await violationsAt(`sqlite:${join(dir, 'in-process.db')}`));
    console.log(`verify after the run: ${verifyViolations} violations`);
    console.log(
      JSON.stringify({
        bench: 'http',
        connections: options.connections,
        seconds: options.seconds,
        rounds,
        ratio: round(ratio),
        commitPerSec: Math.round(fgCommit.requestsPerSec),
        noopPerSec: Math.round(fgNoop.requestsPerSec),
        commitP99Ms: fgCommit.p99Ms,
        noopP99Ms: fgNoop.p99Ms,
        commitCpuMicros: Math.round(fgCommit.cpuMicrosPerRequest),
        commitServerBusy: round(fgCommit.serverBusy),
        commitLoadGeneratorBusy: round(fgCommit.loadGeneratorBusy),
        noopCpuMicros: Math.round(fgNoop.cpuMicrosPerRequest),
        bareRatio: round(bareRatio),
        coalescedRatio: round(coalescedRatio),
        coalescedOverNoop: round(coalescedOverNoop),
        coalescedOverBare: round(coalescedOverBare),
        coalescedPerSec: Math.round(coalesced.commitsPerSec),
        inProcessGroupCommitPerSec: Math.round(inProcessRate.commitsPerSec),
        coalescedFailures: coalesced.failures,
        coalescedCpuMicros: Math.round(coalesced.cpuMicrosPerCommit),
        coalescedServerBusy: round(coalesced.serverBusy),
        coalescedClientBusy: round(coalesced.clientBusy),
        bareCommitPerSec: Math.round(bareCommit.requestsPerSec),
        bareNoopPerSec: Math.round(bareNoop.requestsPerSec),
        bareCommitP99Ms: bareCommit.p99Ms,
        bareCommitCpuMicros: Math.round(bareCommit.cpuMicrosPerRequest),
        bareNoopCpuMicros: Math.round(bareNoop.cpuMicrosPerRequest),
        failures: [...runs.fgNoop, ...runs.fgCommit].reduce((n, r) => n + r.failures, 0),
        verifyViolations,
      }),
    );
    requireClean('http', verifyViolations);
    return figures;
  } finally {
    await inProcess?.close();
    for (const server of servers) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const ROUNDS = 3;
/** Scopes the in-process baseline commits to, as many as the server's. */
const SCOPES = 64;

/** The run with the median rate. */
function medianRate<R extends CallerRate>(results: R[]): R {
  const sorted = [...results].sort((a, b) => a.commitsPerSec - b.commitsPerSec);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no runs');
  return middle;
}
const NOOP = { method: 'GET' as const, path: '/healthz' };

interface ChildServer {
  mode: 'fencegate' | 'bare';
  ready: ServerReady;
  /** CPU time the server process has used so far, in microseconds. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/** A load run with the server's CPU time per answered request (user + system). */
interface MeasuredLoad extends LoadResult {
  cpuMicrosPerRequest: number;
  /**
   * The server's and the load generator's CPU time over the run's length, as shares of one core:
   * a series whose server is well below 1 is held back by something else (the other process, the
   * disk's syncs, other work on the machine).
   */
  serverBusy: number;
  loadGeneratorBusy: number;
}

async function measureLoad(
  server: ChildServer,
  request: LoadRequest,
  load: { connections: number; seconds: number },
): Promise<MeasuredLoad> {
  const before = await server.cpuMicros();
  const ownBefore = process.cpuUsage();
  const result = await runLoad(server.ready.url, request, load);
  const own = process.cpuUsage(ownBefore);
  const used = (await server.cpuMicros()) - before;
  const runMicros = load.seconds * 1e6;
  return {
    ...result,
    cpuMicrosPerRequest: used / Math.max(result.total, 1),
    serverBusy: used / runMicros,
    loadGeneratorBusy: (own.user + own.system) / runMicros,
  };
}

/** Callers' commits with the server's CPU time per commit, as measureLoad has it per request. */
interface MeasuredRate extends CallerRate {
  cpuMicrosPerCommit: number;
  /** The server's and this process's (the coalescing client's) CPU over the run, in cores. */
  serverBusy: number;
  clientBusy: number;
}

async function withCpu(
  server: ChildServer,
  measure: () => Promise<CallerRate>,
): Promise<MeasuredRate> {
  const before = await server.cpuMicros();
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  const result = await measure();
  // The callers finish the commits in flight at the deadline: the run lasts a little longer.
  const runMicros = (performance.now() - started) * 1000;
  const own = process.cpuUsage(ownBefore);
  const used = (await server.cpuMicros()) - before;
  return {
    ...result,
    cpuMicrosPerCommit: used / Math.max((result.commitsPerSec * runMicros) / 1e6, 1),
    serverBusy: used / runMicros,
    clientBusy: (own.user + own.system) / runMicros,
  };
}

async function startChild(
  mode: 'fencegate' | 'bare',
  dir: string,
  options: HttpBenchOptions,
): Promise<ChildServer> {
  const log = openSync(join(dir, `${mode}.log`), 'w');
  const profiling = mode === 'fencegate' && options.profileDir !== undefined;
  const child = fork(SERVER_SCRIPT, [mode, dir], {
    execArgv: [
      '--import',
      'tsx',
      ...(profiling ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : []),
    ],
    stdio: ['ignore', log, 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
    closeSync(log);
  };
  try {
    const ready = await new Promise<ServerReady>((resolve, reject) => {
      child.once('message', (message) => resolve(message as ServerReady));
      child.once('exit', (code) => reject(new Error(`the ${mode} server exited (${code})`)));
    });
    const cpuMicros = async (): Promise<number> => {
      const answer = new Promise<CpuSample>((resolve) =>
        child.once('message', (message) => resolve(message as CpuSample)),
      );
      child.send('cpu');
      return (await answer).cpuMicros;
    };
    return { mode, ready, cpuMicros, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The run with the median rate. */
function median(results: MeasuredLoad[]): MeasuredLoad {
  const sorted = [...results].sort((a, b) => a.requestsPerSec - b.requestsPerSec);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no runs');
  return middle;
}

function commitRequest(ready: ServerReady, run: string) {
  let n = 0;
  return {
    method: 'POST' as const,
    path: '/v1/commit',
    headers: { authorization: `Bearer ${ready.token}`, 'content-type': 'application/json' },
    body: (): string => {
      n += 1;
      const target = ready.scopes[n % ready.scopes.length] ?? { scope: '', fence: 0 };
      return JSON.stringify({
        scope: target.scope,
        fence: target.fence,
        operationId: `${run}-op-${n}`,
        writes: [
          { name: `${run}-r-${n}`, expectRevision: 0, value: { n, text: 'a small record value' } },
        ],
      });
    },
  };
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
