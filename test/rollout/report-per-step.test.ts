/**
 * The report per step, on every store: each scope belongs to the step that moved it, or that was
 * current when an acquire pinned it, and the step's row counts the scopes an acquire pinned, the
 * intents of unknown outcome and the new version's jobs on its own scopes only. The rollout-wide
 * figures are the sums over the steps.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { JobEvent, ScopeState } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const SCOPES = 24;

describe.each(AREA_STORES)('a rollout report per step on $name', (kind) => {
  const stores = storesFor(kind, 'report_per_step');
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it("counts pinned scopes, unknown outcomes and v8 jobs on each step's own scopes", async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const { store } = await stores.open({ clock });
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    for (let i = 0; i < SCOPES; i++) {
      const scope = `wf-${i}`;
      const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7', fence: grant.fence });
    }
    const onV8 = async (): Promise<ScopeState[]> =>
      (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items.filter(
        (scope) => scope.policyVersion === 'v8',
      );

    const started = await gate.rollouts.start({
      rolloutId: 'per-step',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [25, 50],
    });
    const stepOne = await onV8();
    expect(stepOne.length).toBeGreaterThan(0);
    /** A new scope an acquire naming both versions pins to v8 (the hash admits it). */
    const pinNew = async (tag: string): Promise<string> => {
      for (let i = 0; i < 100; i++) {
        const scope = `wf-new-${tag}-${i}`;
        const grant = await gate.acquire({
          scope,
          holder: `probe-${tag}`,
          ttlMs: 60_000,
          policyVersions: ['v7', 'v8'],
        });
        await gate.release({ scope, holder: grant.holder, fence: grant.fence });
        if (grant.policyVersion === 'v8') return scope;
      }
      throw new Error(`no new scope of ${tag} was pinned to v8`);
    };
    const pinnedOne = await pinNew('one');

    // On a scope step 1 moved: a v8 intent whose delivery outcome is unknown, and a failed v8 job.
    const moved = stepOne[0]!;
    const v8 = await gate.acquire({
      scope: moved.scope,
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
    const committed = await gate.commit({
      scope: v8.scope,
      fence: v8.fence,
      operationId: 'v8-intent',
      policyVersion: 'v8',
      intents: [{ effectKey: 'fx-unknown', target: 'crm', payload: 1 }],
    });
    expect(committed.outcome).toBe('committed');
    const [claimed] = await gate.claimIntents({ dispatcher: 'd', ttlMs: 60_000, limit: 10 });
    await gate.completeIntent(claimed!.effectKey, {
      claimFence: claimed!.claimFence,
      outcome: 'unknown',
    });
    await gate.release({ scope: v8.scope, holder: 'v8', fence: v8.fence });
    const job = (jobId: string, scope: string, state: JobEvent['state'], fence: number) => ({
      jobId,
      scope,
      policyVersion: 'v8',
      fence,
      state,
      attempt: 1,
    });
    await gate.recordJobEvents([job('j-one', moved.scope, 'failed', v8.fence)]);

    await gate.rollouts.advance({ rolloutId: 'per-step', revision: started.revision });
    // Step 2 also moves the new scopes the probe left on v7 that its percent admits.
    const movedByTwo = (await onV8()).filter(
      (scope) => scope.scope !== pinnedOne && !stepOne.some((first) => first.scope === scope.scope),
    );
    expect(movedByTwo.length).toBeGreaterThan(0);
    const pinnedTwo = await pinNew('two');
    const pinnedTwoFence = (await gate.getScope(pinnedTwo))?.fence ?? 0;
    await gate.recordJobEvents([
      job('j-two-a', movedByTwo[0]!.scope, 'succeeded', movedByTwo[0]!.fence),
      job('j-two-b', pinnedTwo, 'retrying', pinnedTwoFence),
      // A v7 job is not the new version's: counted on no step.
      { ...job('j-v7', movedByTwo[0]!.scope, 'failed', movedByTwo[0]!.fence), policyVersion: 'v7' },
    ]);

    const report = await gate.rollouts.report('per-step');
    expect(report).not.toBeNull();
    const [one, two] = report!.steps;
    expect(one).toMatchObject({ moved: stepOne.length, pinnedAtAcquire: 1, unknownOutcomes: 1 });
    expect(one!.toPolicyJobs).toMatchObject({ total: 1, byState: { failed: 1, succeeded: 0 } });
    expect(two).toMatchObject({ moved: movedByTwo.length, pinnedAtAcquire: 1, unknownOutcomes: 0 });
    expect(two!.toPolicyJobs).toMatchObject({
      total: 2,
      byState: { failed: 0, succeeded: 1, retrying: 1 },
    });
    expect(report!.pinnedAtAcquire).toBe(2);
    expect(report!.unknownOutcomes).toBe(1);
    expect(report!.toPolicyJobs).toMatchObject({
      total: 3,
      byState: { failed: 1, succeeded: 1, retrying: 1 },
    });
    expect(pinnedOne).not.toBe(pinnedTwo);
  });
});
