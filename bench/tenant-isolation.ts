/**
 * One tenant's storm against another tenant's commits, over HTTP on one server with the per-tenant
 * rate limit on (`--tenant-rate`): a healthy tenant's commits/s alone, then while a second tenant
 * sends stale-fence commits on 64 connections as fast as the server answers them (its requests
 * past the rate are answered 429 before any store work). `tenantIsolationRatio` is the second
 * over the first (target >= 0.9). The rate is set from what the healthy tenant reaches alone on a
 * first server (a quarter above it), so the limit binds the storm and not the healthy tenant
 * whatever the machine does; both measured runs are on the second server.
 *
 * The server, the storm's load generator and the healthy tenant's client each run in a process of
 * their own (isolation/): in one process the load generator's own work on 64 connections shared
 * the server's event loop, and what the healthy tenant lost was the generator's, not the server's.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FencegateClient } from '../src/client/index.js';
import { Fencegate } from '../src/gate.js';
import type { TenantRateLimit } from '../src/server/tenant-rate-limit.js';
import type { LoadResult } from './http/load.js';
import type { IsolationServerReady } from './isolation/server.js';
import { runConcurrent, type RunStats } from './stats.js';

const HEALTHY_IN_FLIGHT = 16;
const STORM_CONNECTIONS = 64;
const SCOPES = 64;
const HOUR = 3_600_000;
const SERVER_SCRIPT = fileURLToPath(new URL('./isolation/server.ts', import.meta.url));
const STORM_SCRIPT = fileURLToPath(new URL('./isolation/storm.ts', import.meta.url));

export interface TenantIsolation {
  rate: TenantRateLimit;
  alone: RunStats;
  withStorm: RunStats;
  storm: LoadResult;
  ratio: number;
  /** Audit violations `verify` finds in both tenants afterwards (must be 0). */
  violations: number;
}

interface Served {
  ready: IsolationServerReady;
  healthy: FencegateClient;
  close(): Promise<void>;
}

function child(
  script: string,
  args: string[],
  log: number | 'inherit',
  execArgv: string[] = [],
): ChildProcess {
  return fork(script, args, {
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', log, 'inherit', 'ipc'],
  });
}

function firstMessage<T>(process: ChildProcess, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    process.once('message', (message) => resolve(message as T));
    process.once('exit', (code) => reject(new Error(`the ${what} exited (${code})`)));
  });
}

/**
 * The server in a process of its own, on the benchmark's file, with `perSecond` per tenant; with
 * `profileDir`, its V8 CPU profile is written there when it exits.
 */
async function serve(dir: string, perSecond: number, profileDir?: string): Promise<Served> {
  const log = openSync(join(dir, `isolation-${perSecond}.log`), 'w');
  const profiling = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const server = child(SERVER_SCRIPT, [dir, String(perSecond)], log, profiling);
  const exited = new Promise((resolve) => server.once('exit', resolve));
  const ready = await firstMessage<IsolationServerReady>(server, 'isolation server');
  const healthy = new FencegateClient({
    url: ready.url,
    token: ready.healthyToken,
    coalesceCommits: false,
  });
  return {
    ready,
    healthy,
    async close() {
      await healthy.close();
      server.kill('SIGTERM');
      await exited;
      closeSync(log);
    },
  };
}

/** The storm's load generator in a process of its own, started when `go` is called. */
async function stormProcess(ready: IsolationServerReady, seconds: number) {
  const storm = child(
    STORM_SCRIPT,
    [ready.url, ready.stormToken, String(SCOPES), String(STORM_CONNECTIONS), String(seconds)],
    'inherit',
  );
  await firstMessage<'ready'>(storm, 'storm');
  return {
    go(): Promise<LoadResult> {
      const result = firstMessage<LoadResult>(storm, 'storm');
      storm.send('go');
      return result;
    },
  };
}

/** Each tenant's 64 scopes: the healthy tenant's held, the storm's moved past fence 1. */
async function prepare(path: string): Promise<number[]> {
  const gate = await Fencegate.open({ store: `sqlite:${path}` });
  try {
    const healthy = gate.forTenant('healthy');
    const storm = gate.forTenant('storm');
    const fences: number[] = [];
    for (let n = 0; n < SCOPES; n++) {
      const scope = `iso/${n}`;
      fences.push((await healthy.acquire({ scope, holder: 'w', ttlMs: HOUR })).fence);
      // The storm's scopes move on past its workers' fence 1: each of its commits is stale.
      await storm.acquire({ scope, holder: 'old', ttlMs: HOUR });
      await storm.takeover(scope, { holder: 'new', ttlMs: HOUR });
    }
    return fences;
  } finally {
    await gate.close();
  }
}

async function verify(path: string): Promise<number> {
  const gate = await Fencegate.open({ store: `sqlite:${path}` });
  try {
    const reports = await Promise.all([
      gate.forTenant('healthy').verify(),
      gate.forTenant('storm').verify(),
    ]);
    return reports.reduce((sum, report) => sum + report.violations.length, 0);
  } finally {
    await gate.close();
  }
}

export async function tenantIsolation(
  dir: string,
  seconds: number,
  profileDir?: string,
): Promise<TenantIsolation> {
  const path = join(dir, 'isolation.db');
  const fences = await prepare(path);
  let run = 0;
  const commitsOf =
    (client: FencegateClient) =>
    async (i: number): Promise<void> => {
      const n = i % SCOPES;
      const result = await client.commit({
        scope: `iso/${n}`,
        fence: fences[n]!,
        operationId: `iso-${run}-${i}`,
        writes: [{ name: `r-${run}-${i}`, expectRevision: 0, value: { n: i } }],
      });
      if (result.outcome !== 'committed') throw new Error(`rejected: ${result.error.code}`);
    };

  const probe = await serve(dir, 1_000_000);
  run = 1;
  const reach = await runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(probe.healthy));
  await probe.close();

  const perSecond = Math.max(10, Math.round(reach.opsPerSec * 1.25));
  const rate = { perSecond, burst: Math.max(1, Math.round(perSecond / 10)) };
  const served = await serve(dir, perSecond, profileDir);
  let alone: RunStats;
  let withStorm: RunStats;
  let storm: LoadResult;
  try {
    run = 2;
    alone = await runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(served.healthy));
    run = 3;
    const stormLoad = await stormProcess(served.ready, seconds);
    [withStorm, storm] = await Promise.all([
      runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(served.healthy)),
      stormLoad.go(),
    ]);
  } finally {
    await served.close();
  }
  return {
    rate,
    alone,
    withStorm,
    storm,
    ratio: withStorm.opsPerSec / alone.opsPerSec,
    violations: await verify(path),
  };
}
