/**
 * The report per step, on every store: each scope belongs to the step that moved it, or that was
 * current when an acquire pinned it, and the step's row counts the scopes an acquire pinned, the
 * intents of unknown outcome and the new version's jobs on its own scopes, made under the fence the
 * rollout gave the scope or a newer one and before the rollback's. The old version's work from
 * before a move or after the rollback, and a scope a takeover took out of the rollout, are not
 * counted. The rollout-wide figures are the sums over the steps.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { JobEvent, RolloutReport, ScopeState } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const SCOPES = 24;
const TTL = 60_000;

describe.each(AREA_STORES)('a rollout report per step on $name', (kind) => {
  const stores = storesFor(kind, 'report_per_step');
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it("counts pinned scopes, unknown outcomes and v8 jobs on each step's own scopes, under the rollout's fences only", async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const { store } = await stores.open({ clock });
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });

    /** A commit carrying one intent, whose delivery is then answered unknown. */
    const unknownIntent = async (scope: string, holder: string, version: string) => {
      const grant = await gate.acquire({ scope, holder, ttlMs: TTL, policyVersion: version });
      const effectKey = `fx-${scope}-${holder}`;
      const result = await gate.commit({
        scope,
        fence: grant.fence,
        operationId: `op-${effectKey}`,
        policyVersion: version,
        intents: [{ effectKey, target: 'crm', payload: 1 }],
      });
      expect(result.outcome).toBe('committed');
      await gate.release({ scope, holder, fence: grant.fence });
      const [claimed] = await gate.claimIntents({ dispatcher: 'd', ttlMs: TTL, limit: 10 });
      expect(claimed?.effectKey).toBe(effectKey);
      // Not due again within the test: the manual clock stays short of its backoff.
      await gate.completeIntent(effectKey, {
        claimFence: claimed!.claimFence,
        outcome: 'unknown',
        retryAfterMs: TTL,
      });
      return grant;
    };
    // Every scope starts on v7 with an intent of unknown outcome: the old version's, before any
    // move, which no step may count.
    for (let i = 0; i < SCOPES; i++) await unknownIntent(`wf-${i}`, 'v7', 'v7');

    const allScopes = async (): Promise<ScopeState[]> => {
      const scopes: ScopeState[] = [];
      let cursor: string | undefined;
      do {
        const page = await gate.listScopes({
          prefix: 'wf-',
          limit: 100,
          ...(cursor ? { cursor } : {}),
        });
        scopes.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      return scopes;
    };
    const onV8 = async () => (await allScopes()).filter((scope) => scope.policyVersion === 'v8');

    const started = await gate.rollouts.start({
      rolloutId: 'per-step',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [25, 50],
    });
    const stepOne = await onV8();
    expect(stepOne.length).toBeGreaterThan(1);
    /** A new scope an acquire naming both versions pins to v8 (the hash admits it). */
    const pinNew = async (tag: string): Promise<string> => {
      for (let i = 0; i < 100; i++) {
        const scope = `wf-new-${tag}-${i}`;
        const grant = await gate.acquire({
          scope,
          holder: `probe-${tag}`,
          ttlMs: TTL,
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
    const v8 = await unknownIntent(moved.scope, 'v8', 'v8');
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

    const expectPerStep = (report: RolloutReport | null) => {
      expect(report).not.toBeNull();
      const [one, two] = report!.steps;
      expect(one).toMatchObject({ moved: stepOne.length, pinnedAtAcquire: 1, unknownOutcomes: 1 });
      expect(one!.toPolicyJobs).toMatchObject({ total: 1, byState: { failed: 1, succeeded: 0 } });
      expect(two).toMatchObject({
        moved: movedByTwo.length,
        pinnedAtAcquire: 1,
        unknownOutcomes: 0,
      });
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
    };
    expectPerStep(await gate.rollouts.report('per-step'));

    // An operator's takeover takes a moved scope out of the rollout: work under it is not v8's.
    const taken = stepOne[1]!;
    const operator = await gate.takeover(taken.scope, { holder: 'operator', ttlMs: TTL });
    await gate.recordJobEvents([job('j-taken', taken.scope, 'failed', operator.fence)]);
    // After the rollback the moved scopes run v7 again under a newer fence: v7's unknown outcome
    // there is not the step's either.
    await gate.rollouts.rollback({ rolloutId: 'per-step' });
    expect(await gate.getScope(moved.scope)).toMatchObject({ policyVersion: 'v7' });
    await unknownIntent(moved.scope, 'v7-again', 'v7');
    expectPerStep(await gate.rollouts.report('per-step'));
    expect(pinnedOne).not.toBe(pinnedTwo);
  });
});
