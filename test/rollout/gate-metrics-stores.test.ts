/**
 * The gates that decide from the store, read on every store: the jobs ledger's failed share, the
 * commit attempts rejected with one code and the intents of unknown outcome, each for the new
 * version on the moved scopes against the old one on the others, and neither for stale work under
 * a fence older than the move. The counting is one module over the Store interface
 * (rollout/gate-metrics.ts), so one case per store covers it; the decisions themselves are tested
 * on SQLite (rollout-driver.test.ts) and in the unit tests of core/gate-rules.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { RolloutDriver } from '../../src/rollout/driver.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { ScopeState } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const SCOPES = 8;

describe.each(AREA_STORES)('rollout gates read from $name', (kind) => {
  const stores = storesFor(kind, 'gate_metrics');
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('counts failed jobs, rejections by code and unknown intents of v8 against v7, and rolls back on the failing gate', async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const { store } = await stores.open({ clock });
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    const before = new Map<string, number>();
    for (let i = 0; i < SCOPES; i++) {
      const scope = `wf-${i}`;
      const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7', fence: grant.fence });
      before.set(scope, grant.fence);
    }
    await gate.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [50, 100],
      holdSeconds: 60,
      gates: [
        { name: 'jobs', metric: 'job_failure_ratio', minSamples: 3, max: 0.9 },
        {
          name: 'stale',
          metric: 'rejection_ratio',
          code: 'stale_revision',
          minSamples: 3,
          max: 0.9,
        },
        { name: 'intents', metric: 'unknown_intent_ratio', minSamples: 3, max: 0.4 },
      ],
    });
    const scopes = (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items;
    const on = (version: string): ScopeState[] =>
      scopes.filter((scope) => scope.policyVersion === version);
    const [moved, unmoved] = [on('v8'), on('v7')];
    expect(moved.length).toBeGreaterThan(0);
    expect(unmoved.length).toBeGreaterThan(0);

    // Jobs: v8's on moved scopes (3 of 4 failed or retrying), v7's on the others (1 of 3), and a
    // v7 job on a moved scope under its fence from before the move: counted on neither side.
    const job = (
      id: string,
      scope: ScopeState,
      version: string,
      state: string,
      fence?: number,
    ) => ({
      jobId: id,
      scope: scope.scope,
      policyVersion: version,
      fence: fence ?? scope.fence,
      state: state as 'failed',
      attempt: 1,
    });
    await gate.recordJobEvents([
      ...['failed', 'retrying', 'failed', 'succeeded'].map((state, i) =>
        job(`v8-${i}`, moved[i % moved.length]!, 'v8', state),
      ),
      ...['failed', 'succeeded', 'succeeded'].map((state, i) =>
        job(`v7-${i}`, unmoved[i % unmoved.length]!, 'v7', state),
      ),
      job('v7-stale', moved[0]!, 'v7', 'failed', before.get(moved[0]!.scope)),
    ]);

    // Commits: v8's (3 of 4 rejected stale_revision, and its intents' commit accepted), v7's on
    // an unmoved scope (1 of 2), and v7's stale commit on a moved scope: refused by the move.
    const v8 = await gate.acquire({
      scope: moved[0]!.scope,
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
    for (let i = 0; i < 4; i++) {
      await gate.commit({
        scope: v8.scope,
        fence: v8.fence,
        operationId: `v8-op-${i}`,
        policyVersion: 'v8',
        writes: [{ name: `doc-${i}`, expectRevision: i < 3 ? 7 : 0, value: i }],
      });
    }
    await gate.commit({
      scope: v8.scope,
      fence: v8.fence,
      operationId: 'v8-intents',
      policyVersion: 'v8',
      intents: [0, 1, 2, 3].map((i) => ({ effectKey: `fx-${i}`, target: 'crm', payload: i })),
    });
    const v7 = await gate.acquire({
      scope: unmoved[0]!.scope,
      holder: 'v7',
      ttlMs: 60_000,
      policyVersion: 'v7',
    });
    for (let i = 0; i < 2; i++) {
      await gate.commit({
        scope: v7.scope,
        fence: v7.fence,
        operationId: `v7-op-${i}`,
        policyVersion: 'v7',
        writes: [{ name: `doc-${i}`, expectRevision: i === 0 ? 7 : 0, value: i }],
      });
    }
    const stale = await gate.commit({
      scope: moved[1 % moved.length]!.scope,
      fence: before.get(moved[1 % moved.length]!.scope)!,
      operationId: 'v7-stale',
      policyVersion: 'v7',
      writes: [{ name: 'doc', expectRevision: 0, value: 'late' }],
    });
    expect(stale).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });

    // Intents of v8: one unknown, one needs_attention, two delivered.
    const claimed = await gate.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 10 });
    const outcomes = ['unknown', 'needs_attention', 'delivered', 'delivered'] as const;
    for (const intent of claimed) {
      await gate.completeIntent(intent.effectKey, {
        claimFence: intent.claimFence,
        outcome: outcomes[Number(intent.effectKey.slice(3))]!,
      });
    }

    clock.advance(1000);
    const driver = new RolloutDriver({
      store,
      holder: 'server-a',
      tenant: gate.tenant,
      onError: (error) => {
        throw error;
      },
    });
    await driver.tick();
    const back = await gate.rollouts.get('r');
    expect(back).toMatchObject({ status: 'rolled_back' });
    expect(back?.reason).toMatch(/^gate intents failed at step 1: value 0.5 of 4 samples/);
    expect(back?.gateResults).toMatchObject([
      {
        name: 'jobs',
        verdict: 'pending',
        value: 0.75,
        samples: 4,
        baseline: 1 / 3,
        baselineSamples: 3,
      },
      {
        name: 'stale',
        verdict: 'pending',
        value: 0.6,
        samples: 5,
        baseline: 0.5,
        baselineSamples: 2,
      },
      { name: 'intents', verdict: 'fail', value: 0.5, samples: 4, limit: 0.4 },
    ]);
  });
});
