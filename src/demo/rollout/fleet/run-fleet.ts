/**
 * `fencegate demo rollout --fleet`: the rollout incident with a blue/green worker fleet. The demo's
 * store is served over HTTP in this process; two BullMQ worker processes per version (each with
 * the handler of its version and the other version's queue) compact every workflow, producers
 * sending all jobs to the v7 queue. The ramp to 5 % and 25 % runs while jobs flow; at 25 % the
 * v8 handlers hold before their commits, and the trigger (the operator's rollback today; a
 * rollout gate can take its place) acts with them in flight. The held v8 commits are then refused
 * and their jobs retried and handed back to v7. Checked from the store: 0 writes accepted from
 * v8 after the rollback, every workflow compacted once, verify clean.
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
import { buildServer } from '../../../server/build-server.js';
import { issueToken } from '../../../server/tokens.js';
import { batchSizeFor } from '../../batches.js';
import type { DemoProgress } from '../../demo-types.js';
import { Phases } from '../../phases.js';
import { scopeOf } from '../../plan.js';
import { createWorkflows, registerPolicies, requireEmptyTenant } from '../../setup.js';
import { POLICY_V7, POLICY_V8, rampRequest, ROLLOUT_ID, STEPS } from '../plan.js';
import {
  COMPACTED,
  FLEET_ATTEMPTS,
  FLEET_CONCURRENCY,
  FLEET_WORKER_ENV,
  fleetKeys,
  parseRedisUrl,
  WORKERS_PER_VERSION,
  type FleetJob,
  type FleetWorkerConfig,
} from './fleet-plan.js';

/** What triggers the rollback once the v8 jobs are in flight: the operator's call by default. */
export type RollbackTrigger = (gate: Fencegate) => Promise<void>;

export const operatorRollback: RollbackTrigger = async (gate) => {
  await gate.rollouts.rollback({ rolloutId: ROLLOUT_ID, reason: 'v8 drops handoff facts' });
};

export interface FleetDemoOptions {
  gate: Fencegate;
  redisUrl: string;
  workflows: number;
  seed: number;
  trigger?: RollbackTrigger;
  onProgress?: (progress: DemoProgress) => void;
}

export interface FleetDemoResult {
  ok: boolean;
  moved: number;
  staleAttempts: number | null;
  staleAccepted: number | null;
  decisionToFencedMs: number | null;
  workers: number;
  jobs: number;
  /** v8 handlers holding their grant when the rollback was triggered. */
  inFlight: number;
  /** Jobs that went to the other version's queue (each hand-back counted once per run). */
  handedBack: number;
  /** Commits accepted under v8 after the rollback began, from the audit log: must be 0. */
  v8AcceptedAfterRollback: number;
  /** Workflows whose compaction is stored, of `jobs`: every one. */
  compacted: number;
  invariantsFailed: number;
  invariants: { name: string; ok: boolean }[];
  totalMs: number;
}

/** How long the demo waits for its jobs before it checks what the store holds. */
const JOBS_LIMIT_MS = 120_000;
const POLL_MS = 50;

export async function runFleetDemo(options: FleetDemoOptions): Promise<FleetDemoResult> {
  const { gate, workflows } = options;
  const trigger = options.trigger ?? operatorRollback;
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
  try {
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const { token } = await issueToken(gate.store, { tenant: gate.tenant, role: 'worker' });
    const store = await counters.client;
    await store.set(keys.hold, '1');

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

    // The ramp runs while the producers' jobs flow through the fleet.
    await phases.run(
      `ramp v8 to ${STEPS[0]} % and ${STEPS[1]} % with jobs flowing`,
      1,
      async () => {
        await gate.rollouts.start(rampRequest('v8 compaction, progressive, on its own fleet'));
        await v7Queue.addBulk(
          Array.from({ length: workflows }, (_, workflow) => ({
            name: 'compact',
            data: { scope: scopeOf(workflow) },
            opts: { attempts: FLEET_ATTEMPTS, removeOnComplete: true, removeOnFail: true },
          })),
        );
        await gate.rollouts.advance({ rolloutId: ROLLOUT_ID });
      },
    );
    const moved = await movedScopes(gate);
    // Every v8 scope not compacted yet has its job on the way to a v8 handler, which holds.
    const expectedHeld = Math.min(
      await v8ScopesLeft(gate),
      WORKERS_PER_VERSION * FLEET_CONCURRENCY,
    );
    await phases.run(`wait for ${expectedHeld} v8 jobs in flight`, expectedHeld, async (tick) => {
      await waitFor(async () => {
        const held = await countOf(store, keys.held);
        tick(Math.min(held, expectedHeld));
        return held >= expectedHeld;
      }, 'the v8 jobs to reach their commits');
    });
    const inFlight = await countOf(store, keys.held);

    let decisionToFencedMs: number | null = null;
    await phases.run('rollback triggered with v8 jobs in flight', 1, async () => {
      const start = performance.now();
      await trigger(gate);
      decisionToFencedMs = Math.round(performance.now() - start);
    });
    await store.del(keys.hold);
    await phases.run(`the fleet finishes ${workflows} jobs`, workflows, async (tick) => {
      await waitFor(async () => {
        const done = await countOf(store, keys.done);
        tick(Math.min(done, workflows));
        return done >= workflows;
      }, 'every job to finish');
    });
    const handedBack = await countOf(store, keys.handedBack);

    const checked = await phases.run('check from the store', 1, () => check(gate, workflows));
    await store.del(keys.held, keys.done, keys.refused, keys.handedBack);
    return {
      ok: checked.invariants.every((invariant) => invariant.ok),
      moved,
      staleAttempts: checked.staleAttempts,
      staleAccepted: checked.staleAccepted,
      decisionToFencedMs,
      workers: 2 * WORKERS_PER_VERSION,
      jobs: workflows,
      inFlight,
      handedBack,
      v8AcceptedAfterRollback: checked.v8AcceptedAfterRollback,
      compacted: checked.compacted,
      invariantsFailed: checked.invariants.filter((invariant) => !invariant.ok).length,
      invariants: checked.invariants,
      totalMs: Math.round(performance.now() - started),
    };
  } finally {
    await Promise.all(children.map(stopWorker));
    const v8Queue = new Queue(queues.v8, { connection });
    for (const queue of [v7Queue, v8Queue]) {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
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

/** The invariants, each read from the store: the report, the audit log, the records, verify. */
async function check(gate: Fencegate, workflows: number): Promise<Checked> {
  const report = await gate.rollouts.report(ROLLOUT_ID);
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
    if (record.exists && record.revision === 1) compacted += 1;
  }
  const verify = await gate.verify();
  const invariants = [
    { name: 'the rollout is rolled back', ok: report?.rollout.status === 'rolled_back' },
    { name: 'the rollback refused stale v8 commits', ok: (rollback?.staleAttempts ?? 0) > 0 },
    { name: 'staleAccepted is 0', ok: rollback?.staleAccepted === 0 },
    { name: '0 writes accepted from v8 after the rollback', ok: v8AcceptedAfterRollback === 0 },
    { name: 'every workflow compacted exactly once', ok: compacted === workflows },
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
