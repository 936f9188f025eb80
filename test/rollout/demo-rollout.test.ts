/**
 * `fencegate demo rollout` through the command line, small, on each store: the rollout driver
 * ramps v8, its gate fails on the jobs the handoff check reported failed, and the driver rolls back
 * by itself; the last line is JSON whose figures say the rollback was the gate's and fenced v8's
 * in-flight jobs out, and the store is then read again to see those figures are the store's. A
 * rollout whose gate only pauses leaves the in-flight commits to land: the demo's invariants catch
 * it and the exit code says so.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollbackCutoverId } from '../../src/core/rollout-rules.js';
import { ROLLOUT_DEMO_TENANT } from '../../src/cli/demo-rollout-command.js';
import { ROLLOUT_ID } from '../../src/demo/rollout/plan.js';
import { useFleetWorkerScript } from '../../src/demo/rollout/fleet/run-fleet.js';
import { Fencegate } from '../../src/gate.js';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { findOrStartRedis, skipWithoutRedis } from '../integrations/redis-service.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

/** Workflows and in-flight jobs per store: the embedded store runs a larger ramp in the same time. */
const SIZES: Record<string, { workflows: number; inFlight: number }> = {
  sqlite: { workflows: 1000, inFlight: 50 },
  postgres: { workflows: 200, inFlight: 10 },
  etcd: { workflows: 200, inFlight: 10 },
};

interface SummaryLine {
  ok: boolean;
  moved: number;
  movedBack: number;
  inFlight: number;
  inFlightAccepted: number;
  staleAttempts: number | null;
  staleAccepted: number | null;
  decisionToFencedMs: number | null;
  trigger: string | null;
  gate: string | null;
  gateValue: number | null;
  gateSamples: number | null;
  gateLimit: number | null;
  invariantsFailed: number;
}

function lastLine(stdout: string): SummaryLine {
  return JSON.parse(stdout.trimEnd().split('\n').at(-1)!) as SummaryLine;
}

describe.each(AREA_STORES)('fencegate demo rollout on $name', (kind) => {
  const stores = storesFor(kind, 'rollout_demo');
  const size = SIZES[kind.family] ?? SIZES.etcd!;

  it(
    'its gate rolls v8 back by itself with jobs in flight: none of their commits lands, exit 0',
    { timeout: 120_000 },
    async () => {
      const url = stores.freshUrl();
      const run = await inProcessCli([
        'demo',
        'rollout',
        '--store',
        url,
        '--workflows',
        `${size.workflows}`,
        '--in-flight',
        `${size.inFlight}`,
      ]);
      expect(run.stderr).not.toMatch(/error|fail/i);
      const summary = lastLine(run.stdout);
      expect(summary).toMatchObject({
        ok: true,
        inFlight: size.inFlight,
        inFlightAccepted: 0,
        staleAttempts: size.inFlight,
        staleAccepted: 0,
        invariantsFailed: 0,
      });
      expect(summary.moved).toBeGreaterThan(size.inFlight);
      expect(summary.movedBack).toBe(summary.moved);
      expect(summary.decisionToFencedMs).toBeGreaterThanOrEqual(0);
      expect(summary).toMatchObject({ trigger: 'gate', gate: 'handoff-facts', gateLimit: 0.05 });
      expect(summary.gateValue).toBeGreaterThan(summary.gateLimit!);
      expect(run.code).toBe(0);

      // The figures are the store's: its report and scopes, read by another handle.
      const gate = await Fencegate.open({
        store: await stores.reopen(url),
        tenant: ROLLOUT_DEMO_TENANT,
      });
      try {
        const report = await gate.rollouts.report(ROLLOUT_ID);
        expect(report?.rollout).toMatchObject({ status: 'rolled_back', percent: 25 });
        // The driver's doing, on the gate's reading: the rollout's reason and its gate results.
        expect(report?.rollout.reason).toMatch(/^gate handoff-facts failed at step 2: /);
        expect(report?.rollout.gateResults).toMatchObject([
          {
            name: 'handoff-facts',
            verdict: 'fail',
            value: summary.gateValue,
            samples: summary.gateSamples,
          },
        ]);
        expect(report?.rollback).toMatchObject({
          moved: summary.moved,
          staleAttempts: size.inFlight,
          staleAccepted: 0,
        });
        const rollback = await gate.store.getCutover(gate.tenant, rollbackCutoverId(ROLLOUT_ID));
        for (const { scope, fence } of rollback!.fences.slice(0, 20)) {
          expect(await gate.getScope(scope)).toMatchObject({ fence, policyVersion: 'v7' });
        }
        expect((await gate.verify()).ok).toBe(true);
      } finally {
        await gate.close();
      }
    },
  );
});

describe('fencegate demo rollout', () => {
  it('exits 1 when the gate only pauses the rollout: the in-flight v8 commits land', async () => {
    const run = await inProcessCli([
      'demo',
      'rollout',
      '--workflows',
      '200',
      '--in-flight',
      '10',
      '--action',
      'pause',
    ]);
    const summary = lastLine(run.stdout);
    expect(summary).toMatchObject({
      ok: false,
      inFlightAccepted: 10,
      staleAttempts: null,
      decisionToFencedMs: null,
      trigger: 'gate',
      gate: 'handoff-facts',
    });
    expect(summary.invariantsFailed).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/FAIL {2}the 10 in-flight v8 jobs resume and commit: 0 accepted/);
    expect(run.code).toBe(1);
  });

  it('answers usage errors with exit 2 and --json with one JSON line', async () => {
    const tooMany = await inProcessCli([
      'demo',
      'rollout',
      '--workflows',
      '200',
      '--in-flight',
      '21',
    ]);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('--in-flight must be an integer from 1 to 20');
    const action = await inProcessCli(['demo', 'rollout', '--action', 'promote']);
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('--action must be one of rollback, pause');
    const json = await inProcessCli(['demo', 'rollout', '--workflows', '100', '--json']);
    expect(json.code).toBe(0);
    expect(json.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(lastLine(json.stdout)).toMatchObject({ ok: true, staleAccepted: 0 });
  });
});

/**
 * The fleet's smallest run: 3 of the first 50 workflows' jobs run v8 at 5 %, enough for the gate's
 * 2 samples, and 15 of the last 50 at 25 %, within the 16 v8 worker slots: every one reaches its
 * check before the gate is read.
 */
const FLEET_WORKFLOWS = 100;

describe.skipIf(skipWithoutRedis('the fleet demo'))('fencegate demo rollout --fleet', () => {
  // The four workers are real node processes, started from one bundle of the worker's sources.
  let bundle: BundledEntries | undefined;
  beforeAll(async () => {
    const worker = fileURLToPath(
      new URL('../../src/demo/rollout/fleet/fleet-worker.ts', import.meta.url),
    );
    bundle = await bundledEntries([worker]);
    useFleetWorkerScript(bundle.bundleOf(worker));
  });
  afterAll(() => {
    useFleetWorkerScript(undefined);
    bundle?.remove();
  });

  it(
    'ramps, fails its gate and rolls back by itself with v8 jobs in flight on four worker processes; no v8 write lands after',
    { timeout: 120_000 },
    async () => {
      const redis = await findOrStartRedis();
      try {
        const run = await inProcessCli([
          'demo',
          'rollout',
          '--fleet',
          '--redis',
          `redis://${redis.host}:${redis.port}/12`,
          '--workflows',
          `${FLEET_WORKFLOWS}`,
        ]);
        expect(run.stderr).not.toMatch(/error|fail/i);
        const summary = JSON.parse(run.stdout.trimEnd().split('\n').at(-1)!) as Record<
          string,
          unknown
        >;
        expect(summary).toMatchObject({
          ok: true,
          workers: 4,
          jobs: FLEET_WORKFLOWS,
          staleAccepted: 0,
          v8AcceptedAfterRollback: 0,
          compacted: FLEET_WORKFLOWS,
          invariantsFailed: 0,
          trigger: 'gate',
          gate: 'handoff-facts',
        });
        expect(summary.inFlight).toBeGreaterThan(0);
        expect(summary.failedChecks).toBeGreaterThan(0);
        expect(summary.gateValue).toBeGreaterThan(summary.gateLimit as number);
        // Each in-flight v8 job's commit was refused; its retry went back to v7.
        expect(summary.staleAttempts).toBe(summary.inFlight);
        expect(summary.handedBack).toBeGreaterThan(0);
        expect(run.code).toBe(0);
      } finally {
        await redis.stop();
      }
    },
  );

  it('refuses flags of the single-process demo', async () => {
    const run = await inProcessCli(['demo', 'rollout', '--fleet', '--in-flight', '5']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--in-flight does not go with --fleet/);
    const badRedis = await inProcessCli(['demo', 'rollout', '--fleet', '--redis', 'http://x']);
    expect(badRedis.code).toBe(2);
  });
});
