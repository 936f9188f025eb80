/**
 * `fencegate demo rollout --fleet`: the rollout incident with a blue/green worker fleet. The demo's
 * store is served over HTTP in this process, and the rollout driver runs beside it (as `fencegate
 * serve` runs it); two BullMQ worker processes per version (each with the handler of its version
 * and the other version's queue) compact the workflows, producers sending every job to the v7
 * queue. The first half of the jobs flows while v8 serves 5 %, where its compaction keeps every
 * handoff fact and the gate passes: the driver ramps to 25 %. The rest flows then: v8's check
 * fails the compactions that lost a fact, the gate fails on those jobs, and the driver rolls back
 * by itself while the other v8 jobs hold before their commits. Their commits are then refused and
 * their jobs, like the failed ones, retried and handed back to v7. Checked from the store: 0 writes
 * accepted from v8 after the rollback, every workflow compacted once with every fact, verify clean.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue, RedisConnection, type ConnectionOptions, type RedisClient } from 'bullmq';
import { rollbackCutoverId } from '../../../core/rollout-rules.js';
import { fail } from '../../../errors.js';
import type { Fencegate } from '../../../gate.js';
import { RolloutDriver } from '../../../rollout/driver.js';
import { buildServer } from '../../../server/build-server.js';
import { issueToken } from '../../../server/tokens.js';
import { batchSizeFor } from '../../batches.js';
import type { DemoProgress } from '../../demo-types.js';
import { canonicalFacts, missingFacts } from '../../handoff-facts.js';
import { Phases } from '../../phases.js';
import { scopeOf } from '../../plan.js';
import { createWorkflows, registerPolicies, requireEmptyTenant } from '../../setup.js';
import {
  DEMO_DRIVER_INTERVAL_MS,
  HANDOFF_GATE,
  POLICY_V7,
  POLICY_V8,
  rampRequest,
  ROLLOUT_ID,
  STEPS,
} from '../plan.js';
import { gateDecision, waitForRollout } from '../driver-watch.js';
import type { GateReading } from '../types.js';
import {
  COMPACTED,
  FLEET_ATTEMPTS,
  FLEET_CONCURRENCY,
  FLEET_RETRY_DELAY_MS,
  FLEET_WORKER_ENV,
  fleetKeys,
  parseRedisUrl,
  WORKERS_PER_VERSION,
  type FleetJob,
  type FleetWorkerConfig,
} from './fleet-plan.js';

export interface FleetDemoOptions {
  gate: Fencegate;
  redisUrl: string;
  workflows: number;
  seed: number;
  onProgress?: (progress: DemoProgress) => void;
}

export interface FleetDemoResult {
  ok: boolean;
  moved: number;
  staleAttempts: number | null;
  staleAccepted: number | null;
  /** From the gate's decision until the rollback's last moved scope was fenced, store time. */
  decisionToFencedMs: number | null;
  /** 'gate' when the driver rolled back on a failed gate; null when nothing did. */
  trigger: 'gate' | null;
  /** The failed gate's reading, from the store. */
  gate: GateReading | null;
  workers: number;
  jobs: number;
  /** v8 handlers holding their grant, before their commit, when the gate failed. */
  inFlight: number;
  /** v8 jobs whose compaction v8's check failed before the gate did. */
  failedChecks: number;
  /** Jobs that went to the other version's queue (each hand-back counted once per run). */
  handedBack: number;
  /** Commits accepted under v8 after the rollback began, from the audit log: must be 0. */
  v8AcceptedAfterRollback: number;
  /** Workflows whose compaction is stored, with every handoff fact, of `jobs`: every one. */
  compacted: number;
  invariantsFailed: number;
  invariants: { name: string; ok: boolean }[];
  totalMs: number;
}

/** How long the demo waits for its jobs, or for the driver, before it checks what the store holds. */
const JOBS_LIMIT_MS = 120_000;
const POLL_MS = 50;

export async function runFleetDemo(options: FleetDemoOptions): Promise<FleetDemoResult> {
  const { gate, workflows } = options;
  const phases = new Phases(options.onProgress);
  const started = performance.now();
  const redis = parseRedisUrl(options.redisUrl);
  const connection: ConnectionOptions = { ...redis, maxRetriesPerRequest: null };
  const runId = randomBytes(6).toString('hex');
  const keys = fleetKeys(runId);
  const queues = { v7: `fencegate-demo-${runId}-v7`, v8: `fencegate-demo-${runId}-v8` };

  await requireEmptyTenant(gate);
  await phases.run(`create ${workflows} workflows under v7`, workflows, async (tick) => {
    await registerPolicies(gate, [POLICY_V7, POLICY_V8]);
    await createWorkflows(gate, { seed: options.seed, workflows }, batchSizeFor(gate.store), tick);
  });

  const server = await buildServer({ store: gate.store });
  const v7Queue = new Queue<FleetJob>(queues.v7, { connection });
  const counters = new RedisConnection(connection);
  const children: ChildProcess[] = [];
  const driver = new RolloutDriver({
    store: gate.store,
    tenant: gate.tenant,
    holder: `demo-fleet-driver-${process.pid}`,
    intervalMs: DEMO_DRIVER_INTERVAL_MS,
  });
  try {
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const { token } = await issueToken(gate.store, { tenant: gate.tenant, role: 'worker' });
    const store = await counters.client;
    await store.set(keys.share, String(STEPS[0]));

    await phases.run(`start ${2 * WORKERS_PER_VERSION} worker processes`, 1, async () => {
      const base = { url: `http://127.0.0.1:${port}`, token, redis, queues, runId };
      const starting: Promise<void>[] = [];
      for (const version of ['v7', 'v8'] as const) {
        for (let i = 0; i < WORKERS_PER_VERSION; i += 1) {
          const config = { ...base, version, concurrency: FLEET_CONCURRENCY };
          starting.push(startWorker(config, children));
        }
      }
      await Promise.all(starting);
    });

    const firstWave = Math.floor(workflows / 2);
    const send = (from: number, to: number) =>
      v7Queue.addBulk(
        Array.from({ length: to - from }, (_, i) => ({
          name: 'compact',
          data: { scope: scopeOf(from + i) },
          opts: {
            attempts: FLEET_ATTEMPTS,
            backoff: { type: 'exponential', delay: FLEET_RETRY_DELAY_MS },
            removeOnComplete: true,
            removeOnFail: true,
          },
        })),
      );
    driver.start();
    await phases.run(
      `${firstWave} jobs flow at ${STEPS[0]} %; the gate passes, the driver ramps to ${STEPS[1]} %`,
      firstWave,
      async (tick) => {
        await gate.rollouts.start(
          rampRequest('v8 compaction, progressive, on its own fleet', workflows),
        );
        await send(0, firstWave);
        await waitFor(async () => {
          const done = await countOf(store, keys.done);
          tick(Math.min(done, firstWave));
          return done >= firstWave;
        }, 'the first jobs to finish');
        await waitForRollout(gate, (r) => r.status !== 'running' || (r.step >= 2 && r.cutoverDone));
      },
    );
    const moved = await movedScopes(gate);
    // v8 now serves 25 %; every v8 scope left has its job staged at the hold or the stage.
    await store.set(keys.share, String(STEPS[1]));
    await store.set(keys.hold, '1');
    await store.set(keys.stage, '1');
    const expected = Math.min(await v8ScopesLeft(gate), WORKERS_PER_VERSION * FLEET_CONCURRENCY);
    await phases.run(
      `${workflows - firstWave} more jobs: ${expected} v8 jobs reach their check`,
      expected,
      async (tick) => {
        await send(firstWave, workflows);
        await waitFor(async () => {
          const staged = (await countOf(store, keys.held)) + (await countOf(store, keys.failing));
          tick(Math.min(staged, expected));
          return staged >= expected;
        }, 'the v8 jobs to reach their commits');
      },
    );
    const failedChecks = await countOf(store, keys.failing);
    // The failing jobs fail now: the gate reads them at the driver's next look, and it acts.
    await store.del(keys.stage);
    await phases.run(
      `${failedChecks} v8 jobs lost handoff facts: the gate trips, the driver rolls back`,
      1,
      () => waitForRollout(gate, (r) => r.status !== 'running' && r.status !== 'rolling_back'),
    );
    const inFlight = await countOf(store, keys.held);
    await driver.stop();
    await store.del(keys.hold);
    await phases.run(`the fleet finishes ${workflows} jobs`, workflows, async (tick) => {
      await waitFor(async () => {
        const done = await countOf(store, keys.done);
        tick(Math.min(done, workflows));
        return done >= workflows;
      }, 'every job to finish');
    });
    const handedBack = await countOf(store, keys.handedBack);
    const { reading, decisionToFencedMs } = await gateDecision(gate);

    const checked = await phases.run('check from the store', 1, () =>
      check(gate, workflows, options.seed),
    );
    await store.del(keys.share, keys.failing, keys.held, keys.done, keys.refused, keys.handedBack);
    return {
      ok: checked.invariants.every((invariant) => invariant.ok),
      moved,
      staleAttempts: checked.staleAttempts,
      staleAccepted: checked.staleAccepted,
      decisionToFencedMs,
      trigger: reading === null ? null : 'gate',
      gate: reading,
      workers: 2 * WORKERS_PER_VERSION,
      jobs: workflows,
      inFlight,
      failedChecks,
      handedBack,
      v8AcceptedAfterRollback: checked.v8AcceptedAfterRollback,
      compacted: checked.compacted,
      invariantsFailed: checked.invariants.filter((invariant) => !invariant.ok).length,
      invariants: checked.invariants,
      totalMs: Math.round(performance.now() - started),
    };
  } finally {
    await driver.stop();
    await Promise.all(children.map(stopWorker));
    const v8Queue = new Queue(queues.v8, { connection });
    for (const queue of [v7Queue, v8Queue]) {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
    await counters.client.then((client) => client.del(keys.stage, keys.hold)).catch(() => 0);
    await counters.close();
    await server.close();
  }
}

/** The scopes the ramp moved to v8: its steps' cutovers. */
async function movedScopes(gate: Fencegate): Promise<number> {
  const report = await gate.rollouts.report(ROLLOUT_ID);
  return (report?.steps ?? []).reduce((sum, step) => sum + step.moved, 0);
}

/** Scopes on v8 whose workflow has no compaction stored yet. */
async function v8ScopesLeft(gate: Fencegate): Promise<number> {
  let left = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await gate.listScopes({
      prefix: 'wf-',
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    for (const scope of page.items) {
      if (scope.policyVersion !== POLICY_V8.version) continue;
      if (!(await gate.getRecord(scope.scope, COMPACTED)).exists) left += 1;
    }
    if (page.nextCursor === null || page.items.length === 0) return left;
    cursor = page.nextCursor;
  }
}

interface Checked {
  staleAttempts: number | null;
  staleAccepted: number | null;
  v8AcceptedAfterRollback: number;
  compacted: number;
  invariants: { name: string; ok: boolean }[];
}

/** The invariants, each read from the store: the rollout, the report, the audit log, the records, verify. */
async function check(gate: Fencegate, workflows: number, seed: number): Promise<Checked> {
  const report = await gate.rollouts.report(ROLLOUT_ID);
  const rollout = report?.rollout ?? null;
  const rollback = report?.rollback ?? null;
  const cutover = await gate.store.getCutover(gate.tenant, rollbackCutoverId(ROLLOUT_ID));
  let v8AcceptedAfterRollback = 0;
  if (cutover !== null) {
    let afterSeq: number | null = cutover.startSeq;
    while (afterSeq !== null) {
      const page = await gate.audit({ kind: 'commit', outcome: 'committed', afterSeq, limit: 500 });
      v8AcceptedAfterRollback += page.items.filter(
        (entry) => entry.policyVersion === POLICY_V8.version,
      ).length;
      afterSeq = page.nextAfterSeq;
    }
  }
  let compacted = 0;
  for (let workflow = 0; workflow < workflows; workflow += 1) {
    const record = await gate.getRecord(scopeOf(workflow), COMPACTED);
    const kept = missingFacts(canonicalFacts(seed, workflow), record.value).length === 0;
    if (record.exists && record.revision === 1 && kept) compacted += 1;
  }
  const verify = await gate.verify();
  const gateFailed = rollout?.gateResults.some(
    (result) => result.name === HANDOFF_GATE && result.verdict === 'fail',
  );
  const invariants = [
    {
      name: `the gate ${HANDOFF_GATE} failed at ${STEPS[1]} % and the driver rolled the rollout back by itself`,
      ok:
        rollout?.status === 'rolled_back' &&
        rollout.percent === STEPS[1] &&
        gateFailed === true &&
        (rollout.reason ?? '').startsWith(`gate ${HANDOFF_GATE} failed`),
    },
    { name: 'the rollback refused stale v8 commits', ok: (rollback?.staleAttempts ?? 0) > 0 },
    { name: 'staleAccepted is 0', ok: rollback?.staleAccepted === 0 },
    { name: '0 writes accepted from v8 after the rollback', ok: v8AcceptedAfterRollback === 0 },
    {
      name: 'every workflow compacted exactly once, with every handoff fact',
      ok: compacted === workflows,
    },
    { name: 'verify finds no violation', ok: verify.violations.length === 0 },
  ];
  return {
    staleAttempts: rollback?.staleAttempts ?? null,
    staleAccepted: rollback?.staleAccepted ?? null,
    v8AcceptedAfterRollback,
    compacted,
    invariants,
  };
}

/** A JavaScript build of the worker to start instead of the one beside this module, if set. */
let workerScript: string | undefined;

/**
 * Has the workers start from `script` (a JavaScript file), or again from beside this module when
 * undefined. The tests run the sources: they start a bundle of the worker rather than each worker
 * process transforming its TypeScript through tsx.
 */
export function useFleetWorkerScript(script: string | undefined): void {
  workerScript = script;
}

/**
 * Starts a worker process and resolves once it consumes. From the compiled package it runs the
 * worker's JavaScript; from the sources its TypeScript, through tsx, unless given a script.
 */
function startWorker(config: FleetWorkerConfig, children: ChildProcess[]): Promise<void> {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts') && workerScript === undefined;
  const entry =
    workerScript ?? join(dirname(here), fromSource ? 'fleet-worker.ts' : 'fleet-worker.js');
  const args = fromSource ? ['--import', 'tsx', entry] : [entry];
  // The configuration holds a token: in the environment, which only this user can read, not in
  // the arguments, which every process list shows.
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [FLEET_WORKER_ENV]: JSON.stringify(config) },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let errors = '';
    child.stderr?.on('data', (data: Buffer) => {
      errors = (errors + data.toString()).slice(-2_000);
    });
    child.stdout?.on('data', (data: Buffer) => {
      if (data.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`a ${config.version} worker exited (${code ?? 'signal'}): ${errors}`));
    });
  });
}

function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Entries of a Redis hash the workers fill, one per job or scope. */
async function countOf(redis: RedisClient, key: string): Promise<number> {
  return Object.keys(await redis.hgetall(key)).length;
}

async function waitFor(done: () => Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + JOBS_LIMIT_MS;
  while (!(await done())) {
    if (Date.now() > until) fail('internal_error', `the fleet demo gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
