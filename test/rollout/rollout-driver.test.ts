/**
 * The rollout driver on the in-memory reference store in store time (a manual clock): holds,
 * gates that never pass on no evidence, an absolute limit that rolls back at once, rejections by
 * code and unknown or needs_attention intents of the new version, a verify violation (on a SQLite
 * file, whose audit table takes a stale commit written by hand), a significance test decided at
 * the hold's end, external metrics by name, two drivers of which exactly one drives, and a driver
 * stopped mid-hold or mid-rollback whose work the next one resumes from the store. The resume
 * path is the same whatever stopped the first driver: everything it decides from is in the store
 * (test/rollout/rollout-driver-kill.test.ts kills a real server process mid-hold). The counts the
 * gates decide from are read on every store in gate-metrics-stores.test.ts.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { RolloutDriver, type DriverAction } from '../../src/rollout/driver.js';
import { parseRolloutConfig } from '../../src/rollout/driver-config.js';
import { sourceReader } from '../../src/rollout/metric-sources.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { RolloutGate, StartRolloutRequest } from '../../src/types.js';
import { memoryGate } from '../helpers/memory-store.js';
import { tempDir } from '../helpers/temp-dir.js';

const SCOPES = 40;
const scopeName = (i: number) => `wf-${String(i).padStart(2, '0')}`;

describe('the rollout driver', () => {
  let clock: ManualClock;
  let gate: Fencegate;
  let tenantNo = 0;
  let source: Server;
  let sourceValue = 0.5;
  let sourceUrl: string;

  beforeAll(async () => {
    clock = new ManualClock();
    gate = await memoryGate({
      clock,
      metricSources: { value: {}, down: {}, owned: { tenants: ['owner'] } },
    });
    source = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(sourceValue));
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/value`;
  });
  afterAll(async () => {
    await gate.close();
    await new Promise((resolve) => source.close(resolve));
  });

  /** Each case in a tenant of its own: v7 scopes, released, on the shared store. */
  let tenant: Fencegate;
  beforeEach(async () => {
    tenantNo += 1;
    tenant = gate.forTenant(`t${tenantNo}`);
    await seed(tenant, SCOPES);
  });

  /** Policies v7 and v8, and `count` scopes last granted under v7, released. */
  async function seed(handle: Fencegate, count: number): Promise<void> {
    await handle.registerPolicy({ version: 'v7' });
    await handle.registerPolicy({ version: 'v8' });
    for (let i = 0; i < count; i++) {
      const scope = scopeName(i);
      const grant = await handle.acquire({
        scope,
        holder: 'v7',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      await handle.release({ scope, holder: 'v7', fence: grant.fence });
    }
  }

  /** A v8 lease on a scope the rollout moved. */
  async function v8Lease(handle: Fencegate = tenant) {
    const moved = (await handle.listScopes({ prefix: 'wf-', limit: 100 })).items.find(
      (scope) => scope.policyVersion === 'v8',
    );
    return await handle.acquire({
      scope: moved!.scope,
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
  }

  function driver(holder = 'server-a', actions: DriverAction[] = []): RolloutDriver {
    return new RolloutDriver({
      store: gate.store,
      holder,
      leaseMs: 10_000,
      readSource: sourceReader({
        value: { url: sourceUrl },
        down: { url: 'http://127.0.0.1:9/unreachable', timeoutMs: 500 },
        owned: { url: sourceUrl, tenants: ['owner'] },
      }),
      onAction: (action) => actions.push(action),
      onError: (error) => {
        throw error;
      },
    });
  }

  function start(gates: RolloutGate[], extra: Partial<StartRolloutRequest> = {}) {
    return tenant.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [25, 100],
      holdSeconds: 60,
      holdExtensionSeconds: 30,
      gates,
      ...extra,
    });
  }

  /** `count` jobs ended on moved scopes under v8 (failed when `failed`), and on unmoved ones under v7. */
  async function jobs(version: 'v7' | 'v8', count: number, failed: number): Promise<void> {
    const scopes = (await tenant.listScopes({ prefix: 'wf-', limit: 100 })).items.filter(
      (scope) => scope.policyVersion === version,
    );
    for (let i = 0; i < count; i++) {
      const scope = scopes[i % scopes.length]!;
      await tenant.recordJobEvents([
        {
          jobId: `${version}-${tenantNo}-${i}-${clock.now()}`,
          scope: scope.scope,
          policyVersion: version,
          fence: scope.fence,
          state: i < failed ? 'failed' : 'succeeded',
          attempt: 1,
        },
      ]);
    }
  }

  it('holds each step in store time, then advances when every gate passes', async () => {
    const actions: DriverAction[] = [];
    const gates: RolloutGate[] = [
      { name: 'jobs', metric: 'job_failure_ratio', minSamples: 5, max: 0.5 },
    ];
    await start(gates);
    const looks = driver('server-a', actions);
    await jobs('v8', 6, 1);
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ step: 1, status: 'running' });
    expect((await tenant.rollouts.get('r'))?.gateResults).toMatchObject([
      { name: 'jobs', verdict: 'pending', samples: 6, limit: 0.5 },
    ]);
    // Each look's reading joins the step's series, in store time.
    const first = clock.now();
    clock.advance(1000);
    await jobs('v8', 2, 0);
    await looks.tick();
    expect((await tenant.rollouts.report('r'))?.gateSeries).toMatchObject([
      {
        name: 'jobs',
        readings: [
          { at: first, verdict: 'pending', samples: 6 },
          { at: first + 1000, verdict: 'pending', samples: 8 },
        ],
      },
    ]);
    clock.advance(59_000);
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ status: 'completed', percent: 100 });
    // The rollout is at its next step now: the series answered are that step's, none yet.
    expect((await tenant.rollouts.report('r'))?.gateSeries).toEqual([
      { name: 'jobs', readings: [] },
    ]);
    expect(actions.map((action) => action.action)).toEqual(['advance']);
  });

  it("a driver given a tenant drives only that tenant's rollouts", async () => {
    await start([]);
    const other = gate.forTenant(`t${tenantNo}-other`);
    await seed(other, 4);
    await other.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [50, 100],
      holdSeconds: 60,
    });
    const actions: DriverAction[] = [];
    const own = new RolloutDriver({
      store: gate.store,
      holder: 'tenant-driver',
      tenant: `t${tenantNo}`,
      onAction: (action) => actions.push(action),
    });
    clock.advance(60_000);
    await own.tick();
    expect(actions).toEqual([{ tenant: `t${tenantNo}`, rolloutId: 'r', action: 'advance' }]);
    expect(await other.rollouts.get('r')).toMatchObject({ step: 1, status: 'running' });
    expect(await gate.store.readRolloutDriver(`t${tenantNo}-other`, 'r')).toBeNull();
    // Ended, so that the later cases' drivers find nothing of this tenant's to drive.
    await other.rollouts.rollback({ rolloutId: 'r' });
  });

  it('a gate with too few samples never passes: the hold extends, then the rollout pauses', async () => {
    await start([{ name: 'jobs', metric: 'job_failure_ratio', minSamples: 5, max: 0.5 }]);
    const looks = driver();
    await jobs('v8', 4, 0);
    clock.advance(60_000);
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ step: 1, status: 'running' });
    clock.advance(30_000);
    await looks.tick();
    const paused = await tenant.rollouts.get('r');
    expect(paused).toMatchObject({ step: 1, status: 'paused', percent: 25 });
    expect(paused?.reason).toMatch(/gate jobs had too few samples/);
    expect(paused?.gateResults[0]).toMatchObject({ verdict: 'pending', samples: 4 });
  });

  it('an absolute limit exceeded mid-hold rolls back at once, with write authority taken back', async () => {
    await start([{ name: 'jobs', metric: 'job_failure_ratio', minSamples: 5, max: 0.2 }]);
    const looks = driver();
    await jobs('v8', 5, 3);
    clock.advance(1000);
    await looks.tick();
    const back = await tenant.rollouts.get('r');
    expect(back).toMatchObject({ status: 'rolled_back' });
    expect(back?.reason).toMatch(/gate jobs failed at step 1/);
    const report = await tenant.rollouts.report('r');
    expect(report?.rollback).toMatchObject({ moved: report?.steps[0]?.moved, staleAccepted: 0 });
  });

  it('counts rejected commits of the new version by code, and rolls back on them', async () => {
    await start([
      { name: 'stale', metric: 'rejection_ratio', code: 'stale_revision', minSamples: 4, max: 0.5 },
      { name: 'fenced', metric: 'rejection_ratio', code: 'stale_fence', minSamples: 4, max: 0.5 },
    ]);
    const looks = driver();
    const v8 = await v8Lease();
    for (let i = 0; i < 4; i++) {
      await tenant.commit({
        scope: v8.scope,
        fence: v8.fence,
        operationId: `op-${i}`,
        policyVersion: 'v8',
        writes: [{ name: `doc-${i}`, expectRevision: i < 3 ? 7 : 0, value: i }],
      });
    }
    clock.advance(1000);
    await looks.tick();
    const back = await tenant.rollouts.get('r');
    expect(back).toMatchObject({ status: 'rolled_back' });
    expect(back?.reason).toMatch(/gate stale failed at step 1/);
    expect(back?.gateResults).toMatchObject([
      { name: 'stale', verdict: 'fail', value: 0.75, samples: 4 },
      { name: 'fenced', value: 0, samples: 4 },
    ]);
  });

  it('counts unknown and needs_attention intents of the new version, and rolls back on them', async () => {
    await start([{ name: 'intents', metric: 'unknown_intent_ratio', minSamples: 4, max: 0.4 }]);
    const looks = driver();
    const v8 = await v8Lease();
    await tenant.commit({
      scope: v8.scope,
      fence: v8.fence,
      operationId: 'op-intents',
      policyVersion: 'v8',
      intents: [0, 1, 2, 3].map((i) => ({ effectKey: `fx-${i}`, target: 'crm', payload: i })),
    });
    const claimed = await tenant.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 10 });
    const outcomes = ['unknown', 'needs_attention', 'delivered', 'delivered'] as const;
    for (const intent of claimed) {
      const i = Number(intent.effectKey.slice(3));
      await tenant.completeIntent(intent.effectKey, {
        claimFence: intent.claimFence,
        outcome: outcomes[i]!,
      });
    }
    clock.advance(1000);
    await looks.tick();
    const back = await tenant.rollouts.get('r');
    expect(back).toMatchObject({ status: 'rolled_back' });
    expect(back?.gateResults[0]).toMatchObject({ verdict: 'fail', value: 0.5, samples: 4 });
  });

  it('a verify violation on a moved scope rolls back at once', async () => {
    // A store of its own on a file: the violation is a stale commit written as accepted, which
    // only a store that skipped its fence check would write, so it is written by hand.
    const dir = tempDir('fencegate-gate-verify-');
    const path = join(dir.path, 'store.db');
    const own = await Fencegate.open({ store: `sqlite:${path}`, clock });
    try {
      await seed(own, 2);
      await own.rollouts.start({
        rolloutId: 'r',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [50, 100],
        holdSeconds: 60,
        gates: [{ name: 'verify', metric: 'verify_violations', minSamples: 1 }],
      });
      const moved = await v8Lease(own);
      const stale = await own.commit({
        scope: moved.scope,
        fence: 1,
        operationId: 'op-stale',
        policyVersion: 'v8',
      });
      expect(stale.outcome).toBe('rejected');
      const db = new Database(path);
      db.prepare(
        `UPDATE audit SET outcome = 'committed', reason = NULL WHERE operation_id = 'op-stale'`,
      ).run();
      db.close();
      const looks = new RolloutDriver({ store: own.store, holder: 'a', leaseMs: 10_000 });
      clock.advance(1000);
      await looks.tick();
      const back = await own.rollouts.get('r');
      expect(back).toMatchObject({ status: 'rolled_back' });
      expect(back?.gateResults[0]).toMatchObject({ name: 'verify', verdict: 'fail', value: 1 });
    } finally {
      await own.close();
      dir.cleanup();
    }
  });

  it('the significance test is decided at the hold end, not before; onFailure pause pauses', async () => {
    const gates: RolloutGate[] = [
      { name: 'worse', metric: 'job_failure_ratio', minSamples: 10, confidence: 0.95 },
    ];
    await start(gates, { onFailure: 'pause' });
    const looks = driver();
    await jobs('v8', 12, 8);
    await jobs('v7', 30, 1);
    await looks.tick();
    const during = await tenant.rollouts.get('r');
    expect(during).toMatchObject({ status: 'running', step: 1 });
    expect(during?.gateResults[0]).toMatchObject({ verdict: 'pending', pValue: null });
    clock.advance(60_000);
    await looks.tick();
    const after = await tenant.rollouts.get('r');
    expect(after).toMatchObject({ status: 'paused', step: 1 });
    expect(after?.gateResults[0]?.verdict).toBe('fail');
    expect(after?.gateResults[0]?.pValue).toBeLessThan(0.05);
  });

  it("an extended hold's significance test is decided at the extension's end, not at a look in between", async () => {
    const gates: RolloutGate[] = [
      { name: 'worse', metric: 'job_failure_ratio', minSamples: 10, confidence: 0.95 },
    ];
    await start(gates, { onFailure: 'pause' });
    const looks = driver();
    await jobs('v8', 12, 8);
    await jobs('v7', 5, 0);
    // The hold's end: too few baseline samples, so the hold is extended.
    clock.advance(60_000);
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ status: 'running', step: 1 });
    // The baseline's samples come in during the extension: a look then decides nothing.
    await jobs('v7', 30, 1);
    clock.advance(10_000);
    await looks.tick();
    const between = await tenant.rollouts.get('r');
    expect(between).toMatchObject({ status: 'running', step: 1 });
    expect(between?.gateResults[0]).toMatchObject({
      verdict: 'pending',
      baselineSamples: 35,
      pValue: null,
    });
    // The extension's end decides, once, on everything it has.
    clock.advance(20_000);
    await looks.tick();
    const after = await tenant.rollouts.get('r');
    expect(after).toMatchObject({ status: 'paused', step: 1 });
    expect(after?.reason).toMatch(/gate worse failed at step 1/);
    expect(after?.gateResults[0]?.pValue).toBeLessThan(0.05);
  });

  it('reads an external metric by name; an unreachable source is no evidence and pauses', async () => {
    sourceValue = 0.5;
    await start([{ name: 'ext', metric: 'external', source: 'value', minSamples: 1, max: 1 }], {
      rolloutId: 'r',
    });
    const looks = driver();
    await looks.tick();
    expect((await tenant.rollouts.get('r'))?.gateResults[0]).toMatchObject({
      value: 0.5,
      verdict: 'pending',
    });
    sourceValue = 3;
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ status: 'rolled_back' });

    const other = gate.forTenant(`t${tenantNo}`);
    await other.rollouts.start({
      rolloutId: 'r2',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [25, 100],
      holdSeconds: 1,
      holdExtensionSeconds: 1,
      gates: [{ name: 'ext', metric: 'external', source: 'down', minSamples: 1, max: 1 }],
    });
    clock.advance(2_000);
    await looks.tick();
    const paused = await other.rollouts.get('r2');
    expect(paused).toMatchObject({ status: 'paused', step: 1 });
    expect(paused?.gateResults[0]).toMatchObject({ verdict: 'pending', value: null, samples: 0 });
  });

  it("an external gate's minSamples counts the step's looks that got a reading", async () => {
    sourceValue = 0.5;
    await start([{ name: 'ext', metric: 'external', source: 'value', minSamples: 3, max: 1 }]);
    const looks = driver();
    for (let i = 0; i < 3; i++) {
      await looks.tick();
      clock.advance(20_000);
    }
    // Three readings during the hold, each within its max: the hold's end passes the gate.
    await looks.tick();
    expect(await tenant.rollouts.get('r')).toMatchObject({ status: 'completed', percent: 100 });
  });

  it('a source of another tenant is refused as an unknown name is, and is never read for it', async () => {
    const refusal = async (source: string) => {
      const error = await start([
        { name: 'ext', metric: 'external', source, minSamples: 1, max: 1 },
      ]).catch((caught: unknown) => caught);
      const { code, message, details } = error as {
        code: string;
        message: string;
        details: object;
      };
      return { code, message: message.replace(source, 'NAME'), details };
    };
    const owned = await refusal('owned');
    expect(owned).toMatchObject({ code: 'invalid_request', details: { field: 'gates[0].source' } });
    expect(owned.message).not.toMatch(/owned/);
    expect(owned).toEqual(await refusal('nowhere'));
    expect(await tenant.rollouts.get('r')).toBeNull();

    const owner = gate.forTenant('owner');
    await seed(owner, 2);
    sourceValue = 0.25;
    await owner.rollouts.start({
      rolloutId: 'mine',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [50, 100],
      holdSeconds: 60,
      gates: [{ name: 'ext', metric: 'external', source: 'owned', minSamples: 1, max: 1 }],
    });
    const read = driver();
    await read.tick();
    expect((await owner.rollouts.get('mine'))?.gateResults[0]).toMatchObject({ value: 0.25 });
    // The driver's reader checks the tenant too: the name alone reads nothing for another tenant.
    const reader = sourceReader({ owned: { url: sourceUrl, tenants: ['owner'] } });
    expect(await reader('owned', 'owner')).toBe(0.25);
    expect(await reader('owned', `t${tenantNo}`)).toBeNull();
    // Ended, so that the later cases' drivers find nothing of this tenant's to drive.
    sourceValue = 3;
    await read.tick();
    expect(await owner.rollouts.get('mine')).toMatchObject({ status: 'rolled_back' });
  });

  it("the configuration's tenants of a source: a list of tenant names, or refused", () => {
    const url = 'http://127.0.0.1:9100/errors';
    expect(
      parseRolloutConfig({ metricSources: { e: { url, tenants: ['acme'] } } }).metricSources,
    ).toEqual({ e: { url, tenants: ['acme'] } });
    for (const [tenants, field] of [
      [[], 'metricSources.e.tenants'],
      ['acme', 'metricSources.e.tenants'],
      [['Not A Tenant'], 'metricSources.e.tenants[0]'],
    ] as const) {
      expect(() => parseRolloutConfig({ metricSources: { e: { url, tenants } } })).toThrow(
        expect.objectContaining({ code: 'invalid_request', details: { field } }),
      );
    }
    expect(() => parseRolloutConfig({ metricSources: { e: { url, tenant: 'acme' } } })).toThrow(
      expect.objectContaining({ details: { field: 'metricSources.e.tenant' } }),
    );
  });

  it('of two drivers exactly one drives; when one stops mid-hold the other takes over after its lease', async () => {
    await start([{ name: 'jobs', metric: 'job_failure_ratio', minSamples: 1, max: 1 }]);
    const aActions: DriverAction[] = [];
    const bActions: DriverAction[] = [];
    const a = driver('server-a', aActions);
    const b = driver('server-b', bActions);
    await jobs('v8', 2, 0);
    await Promise.all([a.tick(), b.tick()]);
    const first = (await gate.store.readRolloutDriver(`t${tenantNo}`, 'r'))!;
    expect(['server-a', 'server-b']).toContain(first.holder);
    // Both look at the hold's end at once: one advances, the other finds the lease taken.
    clock.advance(60_000);
    await Promise.all([a.tick(), b.tick()]);
    expect([...aActions, ...bActions].map((action) => action.action)).toEqual(['advance']);
    expect(await tenant.rollouts.get('r')).toMatchObject({ status: 'completed' });

    // The holder stops looking (killed) mid-hold of a new rollout: the other waits out its lease.
    const next = gate.forTenant(`t${tenantNo}`);
    await next.registerPolicy({ version: 'v9' });
    await next.rollouts.start({
      rolloutId: 'r9',
      fromPolicy: 'v8',
      toPolicy: 'v9',
      prefix: 'wf-',
      steps: [50, 100],
      holdSeconds: 30,
    });
    await a.tick();
    aActions.length = 0;
    bActions.length = 0;
    clock.advance(5_000);
    await b.tick();
    expect(await gate.store.readRolloutDriver(`t${tenantNo}`, 'r9')).toMatchObject({
      holder: 'server-a',
      fence: 1,
    });
    clock.advance(26_000);
    await b.tick();
    expect(bActions.map((action) => action.action)).toEqual(['advance']);
    expect(aActions).toEqual([]);
    expect(await gate.store.readRolloutDriver(`t${tenantNo}`, 'r9')).toMatchObject({
      holder: 'server-b',
      fence: 2,
    });
    expect(await next.rollouts.get('r9')).toMatchObject({ status: 'completed' });
  });

  it('a rollback a stopped server left half done is finished by the next driver', async () => {
    await start([{ name: 'jobs', metric: 'job_failure_ratio', minSamples: 1, max: 1 }]);
    const current = (await tenant.rollouts.get('r'))!;
    // What a server killed right after its rollback's state change leaves: rolling_back, nothing moved.
    const claim = (await gate.store.claimRolloutDriver(`t${tenantNo}`, 'r', 'killed', 10_000))!;
    await gate.store.changeRollout(`t${tenantNo}`, {
      action: 'rollback',
      rolloutId: 'r',
      revision: current.revision,
      driver: { holder: 'killed', fence: claim.fence },
    });
    expect(await tenant.rollouts.get('r')).toMatchObject({
      status: 'rolling_back',
      cutoverDone: false,
    });
    const actions: DriverAction[] = [];
    const next = driver('server-b', actions);
    await next.tick();
    expect(actions).toEqual([]);
    clock.advance(10_001);
    await next.tick();
    expect(actions.map((action) => action.action)).toEqual(['resume_moves']);
    const back = await tenant.rollouts.get('r');
    expect(back).toMatchObject({ status: 'rolled_back', cutoverDone: true });
    const scopes = (await tenant.listScopes({ prefix: 'wf-', limit: 100 })).items;
    expect(scopes.every((scope) => scope.policyVersion === 'v7')).toBe(true);
  });
});
