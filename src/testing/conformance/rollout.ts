/**
 * Progressive rollouts (docs/rollout.md): sticky steps that are cutovers, new scopes pinned by the
 * hash, the version mismatch, no overlaps, fenced control, and a rollback that takes write
 * authority away from the new version's in-flight work and leaves what others moved. Run where
 * the entry point offers `gate.rollouts`.
 */
import { describe, expect, it } from 'vitest';
import { isFencegateError, type FencegateError } from '../../errors.js';
import { admits } from '../../core/rollout-rules.js';
import type { RolloutsApi } from '../../rollout/rollouts.js';
import type { CommitRequest, Grant, Rollout, ScopeState } from '../../types.js';
import { LONG_TTL, acquire, expectCommitted, expectFailure, expectRejected } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SCOPES = 24;

function scopeName(i: number): string {
  return `wf-${String(i).padStart(3, '0')}/memory`;
}

const ALL = Array.from({ length: SCOPES }, (_, i) => scopeName(i));

/** v7 and v8 registered, and every scope created on v7 and released, as finished v7 jobs leave it. */
async function v7Scopes(gate: ConformanceGate): Promise<void> {
  await gate.registerPolicy({ version: 'v7', digest: 'sha256:v7' });
  await gate.registerPolicy({ version: 'v8', digest: 'sha256:v8' });
  await Promise.all(
    ALL.map(async (scope) => {
      const grant = await acquire(gate, scope, 'v7-worker', { policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7-worker', fence: grant.fence });
    }),
  );
}

async function scopesById(gate: ConformanceGate): Promise<Map<string, ScopeState>> {
  const page = await gate.listScopes({ prefix: 'wf-', limit: 1000 });
  return new Map(page.items.map((scope) => [scope.scope, scope]));
}

function rolloutsOf(gate: ConformanceGate): RolloutsApi {
  if (gate.rollouts === undefined) throw new Error('the rollout cases need gate.rollouts');
  return gate.rollouts;
}

/** The scopes the ramp of `rolloutId` admits at `percent`. */
/** A commit of one intent on `scope`, its operationId the intent's effect key. */
function intentCommit(
  scope: string,
  fence: number,
  effectKey: string,
  target: string,
  more: { payload?: Record<string, number>; release?: boolean } = {},
): CommitRequest {
  return {
    scope,
    fence,
    operationId: effectKey,
    intents: [{ effectKey, target, payload: more.payload ?? {} }],
    ...(more.release === true ? { release: true } : {}),
  };
}

/**
 * Starts rollout r1 of v7 to v8 over the `wf-` scopes, its one step at 50 %, its moved scopes held
 * by `controller` when one is named.
 */
/** Rollout r1, v7 to v8 over the `wf-` scopes, in `steps`. */
function startRamp(rollouts: RolloutsApi, steps: number[], controller?: string): Promise<Rollout> {
  return rollouts.start({
    rolloutId: 'r1',
    fromPolicy: 'v7',
    toPolicy: 'v8',
    prefix: 'wf-',
    steps,
    ...(controller === undefined ? {} : { controller }),
  });
}

async function rampHalf(rollouts: RolloutsApi, controller?: string): Promise<void> {
  await startRamp(rollouts, [50], controller);
}

/** Tenant A's handle through the store's second connection (over HTTP, the second server). */
async function secondConnection(fx: SubjectFixture): Promise<ConformanceGate> {
  const subject = fx.subject;
  if (subject.connectAgain === undefined) {
    throw new Error('a store with sharedAcrossProcesses must provide connectAgain()');
  }
  return await subject.connectAgain();
}

/**
 * Two commands sent at once: exactly one must apply and the other be refused rollout_conflict.
 * `index` is the one that applied.
 */
async function raceOf(
  commands: [Promise<Rollout>, Promise<Rollout>],
): Promise<{ index: number; applied: Rollout; refused: FencegateError }> {
  const results = await Promise.allSettled(commands);
  const index = results.findIndex((result) => result.status === 'fulfilled');
  expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
  const applied = results[index] as PromiseFulfilledResult<Rollout>;
  const error: unknown = (results[1 - index] as PromiseRejectedResult).reason;
  if (!isFencegateError(error)) throw error;
  expect(error.code).toBe('rollout_conflict');
  return { index, applied: applied.value, refused: error };
}

function ramped(rolloutId: string, percent: number): string[] {
  return ALL.filter((scope) => admits(rolloutId, scope, percent));
}

export function rolloutCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.rollouts)('rollouts', () => {
    it('ramps step by step: each step a cutover over the scopes the hash admits, moved released; the set only grows; 100 % completes it', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const before = await scopesById(gate);
      const rollouts = rolloutsOf(gate);
      let rollout = await startRamp(rollouts, [20, 60]);
      expect(rollout).toMatchObject({ status: 'running', step: 1, percent: 20, revision: 1 });
      expect(rollout).toMatchObject({ cutoverId: 'r1/step-1', cutoverDone: true });
      let previous = new Set<string>();
      for (const percent of [20, 60, 100]) {
        if (percent === 60) rollout = await rollouts.advance({ rolloutId: 'r1' });
        if (percent === 100) rollout = await rollouts.promote({ rolloutId: 'r1' });
        const scopes = await scopesById(gate);
        const onV8 = ALL.filter((scope) => scopes.get(scope)?.policyVersion === 'v8');
        expect(onV8).toEqual(ramped('r1', percent));
        for (const scope of previous) expect(onV8).toContain(scope);
        previous = new Set(onV8);
        for (const scope of onV8) {
          // Fence + 1 over v7's, released for v8's workers to acquire.
          expect(scopes.get(scope)).toMatchObject({
            fence: before.get(scope)!.fence + 1,
            holder: null,
          });
        }
      }
      expect(rollout).toMatchObject({ status: 'completed', step: 3, percent: 100 });
      expect(await rollouts.get('r1')).toEqual(rollout);
      expect((await rollouts.list()).map((r) => r.rolloutId)).toEqual(['r1']);
      // Each step's cutover moved each of its scopes once.
      const moves = (await gate.audit({ limit: 1000 })).items.filter((e) => e.kind === 'cutover');
      expect(moves.map((e) => e.scope).sort()).toEqual([...ALL].sort());
      const report = await rollouts.report('r1');
      expect(report?.steps.map((s) => [s.cutoverId, s.percent, s.moved])).toEqual([
        ['r1/step-1', 20, ramped('r1', 20).length],
        ['r1/step-2', 60, ramped('r1', 60).length - ramped('r1', 20).length],
        ['r1/step-3', 100, SCOPES - ramped('r1', 60).length],
      ]);
      // A completed rollout can be advanced no further.
      await expectFailure(rollouts.advance({ rolloutId: 'r1' }), 'rollout_conflict');
    });

    it('a rollout naming a controller leaves the moved scopes held by it, without lease expiry; its rollback releases them', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const before = await scopesById(gate);
      const rollouts = rolloutsOf(gate);
      await rampHalf(rollouts, 'ramp-ctl');
      const moved = ramped('r1', 50);
      let scopes = await scopesById(gate);
      for (const scope of ALL) {
        expect(scopes.get(scope)).toMatchObject(
          moved.includes(scope)
            ? {
                policyVersion: 'v8',
                holder: 'ramp-ctl',
                leaseExpiresAt: null,
                fence: before.get(scope)!.fence + 1,
              }
            : { policyVersion: 'v7', holder: null, fence: before.get(scope)!.fence },
        );
      }
      await rollouts.rollback({ rolloutId: 'r1' });
      scopes = await scopesById(gate);
      for (const scope of moved) {
        expect(scopes.get(scope)).toMatchObject({
          policyVersion: 'v7',
          holder: null,
          fence: before.get(scope)!.fence + 2,
        });
      }
    });

    it('a v8 worker acquires a moved scope; a v7-only worker is told where the scope went', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      await rolloutsOf(gate).start({
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [50],
      });
      const [moved] = ramped('r1', 50);
      const grant = await gate.acquire({
        scope: moved!,
        holder: 'v8-worker',
        ttlMs: LONG_TTL,
        policyVersions: ['v7', 'v8'],
      });
      expect(grant.policyVersion).toBe('v8');
      const error = await expectFailure(
        acquire(gate, moved!, 'v7-worker', { policyVersion: 'v7' }),
        'policy_mismatch',
      );
      expect(error.details).toMatchObject({ currentPolicyVersion: 'v8' });
    });

    it('a rollback moves every moved scope back with a higher fence; the in-flight v8 commits afterwards are refused', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      await startRamp(rollouts, [30, 70]);
      await rollouts.advance({ rolloutId: 'r1' });
      const moved = ramped('r1', 70);
      const inFlight: Grant[] = await Promise.all(
        moved.map((scope) => acquire(gate, scope, `v8-${scope}`, { policyVersion: 'v8' })),
      );
      const afterMove = await scopesById(gate);
      const rollback = await rollouts.rollback({ rolloutId: 'r1' });
      expect(rollback).toMatchObject({ status: 'rolled_back', cutoverId: 'r1/rollback' });
      const scopes = await scopesById(gate);
      for (const scope of ALL) {
        expect(scopes.get(scope)!.policyVersion).toBe('v7');
        if (moved.includes(scope)) {
          expect(scopes.get(scope)!.fence).toBe(afterMove.get(scope)!.fence + 1);
          expect(scopes.get(scope)!.holder).toBeNull();
        } else {
          expect(scopes.get(scope)!.fence).toBe(afterMove.get(scope)!.fence);
        }
      }
      for (const grant of inFlight) {
        const result = await gate.commit({
          scope: grant.scope,
          fence: grant.fence,
          operationId: `late-${grant.scope}`,
          writes: [{ name: 'summary', expectRevision: 0, value: 'v8 output' }],
        });
        expectRejected(result, 'stale_fence');
      }
      const report = await rollouts.report('r1');
      expect(report?.rollback).toMatchObject({
        status: 'completed',
        moved: moved.length,
        skipped: [],
        staleAttempts: moved.length,
        staleAccepted: 0,
      });
      // A rollback sent again changes nothing.
      await rollouts.rollback({ rolloutId: 'r1' });
      expect(await scopesById(gate)).toEqual(scopes);
    });

    it('a rollback with cancelIntents cancels the pending intents committed under toPolicy, and only those', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const [scope] = ramped('r1', 50);
      const v7 = await acquire(gate, scope!, 'v7-worker', { policyVersion: 'v7' });
      expectCommitted(
        await gate.commit(
          intentCommit(scope!, v7.fence, 'mail-v7', 'mailer', { payload: { n: 7 }, release: true }),
        ),
      );
      const rollouts = rolloutsOf(gate);
      await rampHalf(rollouts);
      const v8 = await acquire(gate, scope!, 'v8-worker', { policyVersion: 'v8' });
      expectCommitted(
        await gate.commit(
          intentCommit(scope!, v8.fence, 'mail-v8', 'mailer', { payload: { n: 8 } }),
        ),
      );
      await rollouts.rollback({ rolloutId: 'r1', cancelIntents: true });
      expect((await gate.getIntent('mail-v8'))?.status).toBe('cancelled');
      expect((await gate.getIntent('mail-v7'))?.status).toBe('pending');
      expect((await rollouts.report('r1'))?.rollback?.intentsCancelled).toBe(1);
    });

    it('a rollback with cancelIntents cancels every pending toPolicy intent of a scope holding ~130 of them, in bounded pages after its move; the report counts each; a claimed one is not cancelled', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const [busy, quiet] = ramped('r1', 50);
      const v7 = await acquire(gate, busy!, 'v7-worker', { policyVersion: 'v7' });
      expectCommitted(
        await gate.commit(intentCommit(busy!, v7.fence, 'v7-mail', 'mailer', { release: true })),
      );
      const rollouts = rolloutsOf(gate);
      await rampHalf(rollouts);
      const v8 = await acquire(gate, busy!, 'v8-worker', { policyVersion: 'v8' });
      const keys = Array.from({ length: 130 }, (_, i) => `v8-${String(i).padStart(3, '0')}`);
      const claimedKey = 'v8-064';
      const commits = [];
      for (let start = 0; start < keys.length; start += 13) {
        commits.push({
          scope: busy!,
          fence: v8.fence,
          operationId: `v8-intents-${start}`,
          intents: keys.slice(start, start + 13).map((effectKey) => ({
            effectKey,
            target: effectKey === claimedKey ? 'dispatch-now' : 'crm',
            payload: {},
          })),
        });
      }
      for (const item of await gate.commitMany(commits)) {
        expect(item.ok && item.result.outcome).toBe('committed');
      }
      const other = await acquire(gate, quiet!, 'v8-worker', { policyVersion: 'v8' });
      expectCommitted(await gate.commit(intentCommit(quiet!, other.fence, 'v8-quiet', 'crm')));
      const taken = await gate.claimIntents({
        dispatcher: 'd1',
        ttlMs: LONG_TTL,
        limit: 5,
        targets: ['dispatch-now'],
      });
      expect(taken.map((intent) => intent.effectKey)).toEqual([claimedKey]);

      const rolledBack = await rollouts.rollback({ rolloutId: 'r1', cancelIntents: true });
      expect(rolledBack).toMatchObject({ status: 'rolled_back', cutoverDone: true });
      const cancelled = [...keys.filter((key) => key !== claimedKey), 'v8-quiet'];
      const { items } = await gate.listIntents({ scope: busy!, limit: 1000 });
      const statusOf = new Map(items.map((intent) => [intent.effectKey, intent.status]));
      expect(keys.filter((key) => statusOf.get(key) === 'cancelled')).toEqual(
        keys.filter((key) => key !== claimedKey),
      );
      expect([statusOf.get(claimedKey), statusOf.get('v7-mail')]).toEqual(['claimed', 'pending']);
      expect((await gate.getIntent('v8-quiet'))?.status).toBe('cancelled');
      expect((await rollouts.report('r1'))?.rollback?.intentsCancelled).toBe(cancelled.length);
      // The move back came first: the new version commits nothing more.
      expectRejected(
        await gate.commit(intentCommit(busy!, v8.fence, 'v8-after', 'crm')),
        'stale_fence',
      );
    });

    it('concurrent operator commands at one revision: one applies, the other is answered rollout_conflict with the current revision', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      const started = await startRamp(rollouts, [10, 40, 80]);
      const results = await Promise.allSettled([
        rollouts.advance({ rolloutId: 'r1', revision: started.revision }),
        rollouts.rollback({ rolloutId: 'r1', revision: started.revision }),
        rollouts.pause({ rolloutId: 'r1', revision: started.revision }),
      ]);
      const applied = results.filter((r) => r.status === 'fulfilled');
      expect(applied).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        const error: unknown = result.reason;
        if (!isFencegateError(error)) throw error;
        expect(error.code).toBe('rollout_conflict');
        expect(error.details).toMatchObject({ reason: 'state', rolloutId: 'r1' });
        expect(error.details.revision).toBeGreaterThan(started.revision);
      }
      // Whichever applied: an advance or a pause is one change; a rollback is two, as its
      // completion is another.
      const current = await rollouts.get('r1');
      const winner = ['advance', 'rollback', 'pause'][results.indexOf(applied[0]!)];
      const expected = {
        advance: { status: 'running', step: 2, revision: started.revision + 1 },
        rollback: { status: 'rolled_back', step: 1, revision: started.revision + 2 },
        pause: { status: 'paused', step: 1, revision: started.revision + 1 },
      }[winner!];
      expect(current).toMatchObject(expected!);
    });

    it.skipIf(!fx.capabilities.sharedAcrossProcesses)(
      'operator commands at one revision through two connections: one applies, the other is answered rollout_conflict with the state it lost to, and moves nothing',
      async () => {
        const { gate } = fx.subject;
        await v7Scopes(gate);
        const first = rolloutsOf(gate);
        const again = await secondConnection(fx);
        try {
          const second = rolloutsOf(again);
          const started = await startRamp(first, [10, 40, 80]);
          // The same command from both: two applied would move two steps.
          const advances = await raceOf([
            first.advance({ rolloutId: 'r1', revision: started.revision }),
            second.advance({ rolloutId: 'r1', revision: started.revision }),
          ]);
          const advanced = {
            status: 'running',
            step: 2,
            percent: 40,
            revision: started.revision + 1,
          };
          expect(advances.applied).toMatchObject({ ...advanced, cutoverDone: true });
          expect(advances.refused.details).toMatchObject({
            reason: 'state',
            rolloutId: 'r1',
            status: 'running',
            step: 2,
            percent: 40,
            revision: advanced.revision,
          });
          expect(await first.get('r1')).toMatchObject(advanced);
          expect(await second.get('r1')).toEqual(await first.get('r1'));
          let scopes = await scopesById(gate);
          expect(ALL.filter((scope) => scopes.get(scope)?.policyVersion === 'v8')).toEqual(
            ramped('r1', 40),
          );
          expect((await first.report('r1'))?.steps.map((step) => step.cutoverId)).toEqual([
            'r1/step-1',
            'r1/step-2',
          ]);

          // Two different commands: the loser is told the state the winner left.
          const revision = advanced.revision;
          const race = await raceOf([
            first.pause({ rolloutId: 'r1', revision }),
            second.advance({ rolloutId: 'r1', revision }),
          ]);
          const won = race.index === 0 ? 'pause' : 'advance';
          const expected = {
            pause: { status: 'paused', step: 2, percent: 40, revision: revision + 1 },
            advance: { status: 'running', step: 3, percent: 80, revision: revision + 1 },
          }[won];
          expect(race.applied).toMatchObject(expected);
          expect(race.refused.details).toMatchObject({
            reason: 'state',
            rolloutId: 'r1',
            status: expected.status,
            step: expected.step,
            percent: expected.percent,
            revision: expected.revision,
          });
          expect(await second.get('r1')).toMatchObject(expected);
          scopes = await scopesById(gate);
          expect(ALL.filter((scope) => scopes.get(scope)?.policyVersion === 'v8')).toEqual(
            ramped('r1', expected.percent),
          );
        } finally {
          await again.close();
        }
      },
    );

    it('pause stops the ramp: advance is refused until resume and moves nothing; a resume at a stale revision is refused with the current state; at the current one, the next advance moves the next step', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      const started = await startRamp(rollouts, [20, 60]);
      const paused = await rollouts.pause({ rolloutId: 'r1', revision: started.revision });
      expect(paused).toMatchObject({
        status: 'paused',
        step: 1,
        percent: 20,
        revision: started.revision + 1,
      });
      const atPause = await scopesById(gate);
      // Named revision or not, no step advances while paused.
      for (const command of [{ rolloutId: 'r1' }, { rolloutId: 'r1', revision: paused.revision }]) {
        const error = await expectFailure(rollouts.advance(command), 'rollout_conflict');
        expect(error.details).toMatchObject({
          reason: 'state',
          rolloutId: 'r1',
          status: 'paused',
          revision: paused.revision,
        });
      }
      expect(await rollouts.get('r1')).toEqual(paused);
      expect(await scopesById(gate)).toEqual(atPause);

      // The revision read before the pause is gone: a resume made on it is refused.
      const stale = await expectFailure(
        rollouts.resume({ rolloutId: 'r1', revision: started.revision }),
        'rollout_conflict',
      );
      expect(stale.details).toMatchObject({
        reason: 'state',
        rolloutId: 'r1',
        status: 'paused',
        revision: paused.revision,
      });
      expect(await rollouts.get('r1')).toEqual(paused);

      const resumed = await rollouts.resume({ rolloutId: 'r1', revision: paused.revision });
      expect(resumed).toMatchObject({
        status: 'running',
        step: 1,
        percent: 20,
        revision: paused.revision + 1,
      });
      expect(await scopesById(gate)).toEqual(atPause);
      const advanced = await rollouts.advance({ rolloutId: 'r1', revision: resumed.revision });
      expect(advanced).toMatchObject({
        status: 'running',
        step: 2,
        percent: 60,
        revision: resumed.revision + 1,
        cutoverId: 'r1/step-2',
        cutoverDone: true,
      });
      const scopes = await scopesById(gate);
      expect(ALL.filter((scope) => scopes.get(scope)?.policyVersion === 'v8')).toEqual(
        ramped('r1', 60),
      );
    });

    it('overlapping rollouts and cutovers are refused while a rollout is active; a rollout after a rolled-back one ramps again', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      await gate.registerPolicy({ version: 'v9', digest: 'sha256:v9' });
      const rollouts = rolloutsOf(gate);
      const request = { fromPolicy: 'v7', toPolicy: 'v8', steps: [50] };
      await rollouts.start({ ...request, rolloutId: 'r1', prefix: 'wf-' });
      const overlap = { reason: 'overlap', rolloutId: 'r1' };
      for (const other of [
        () => rollouts.start({ ...request, rolloutId: 'r2', prefix: 'wf-00' }),
        () => rollouts.start({ ...request, rolloutId: 'r2', prefix: 'w' }),
        () => rollouts.start({ ...request, rolloutId: 'r2', scopes: ['x', scopeName(3)] }),
        () => gate.cutover({ toPolicy: 'v9', holder: 'ctl', scopes: [scopeName(5)] }),
        () => gate.cutover({ toPolicy: 'v9', holder: 'ctl', prefix: 'wf-01' }),
      ]) {
        const error = await expectFailure(other(), 'rollout_conflict');
        expect(error.details).toEqual(overlap);
      }
      // A selection beside it is not refused.
      await rollouts.start({ ...request, rolloutId: 'r3', scopes: ['other/1'] });
      await rollouts.rollback({ rolloutId: 'r1' });
      const second = await rollouts.start({ ...request, rolloutId: 'r2', prefix: 'wf-' });
      expect(second).toMatchObject({ status: 'running', percent: 50 });
      const scopes = await scopesById(gate);
      expect(ALL.filter((scope) => scopes.get(scope)?.policyVersion === 'v8')).toEqual(
        ramped('r2', 50),
      );
    });

    it.skipIf(!fx.capabilities.storeInProcess)(
      'a rollout overlapping a cutover still moving scopes is refused until the cutover completes',
      async () => {
        const { gate } = fx.subject;
        const { store, tenant } = fx.subject.store!;
        await v7Scopes(gate);
        await gate.registerPolicy({ version: 'v9', digest: 'sha256:v9' });
        const cutover = { cutoverId: 'c1', toPolicy: 'v9', holder: 'ctl', prefix: 'wf-01' };
        // Started and not moved yet, as a process killed before its first chunk leaves it.
        await store.startCutover(tenant, cutover);
        const rollouts = rolloutsOf(gate);
        const request = { rolloutId: 'r1', fromPolicy: 'v7', toPolicy: 'v8', steps: [100] };
        for (const selection of [
          { prefix: 'wf-' },
          { prefix: 'wf-01' },
          { scopes: [scopeName(12)] },
        ]) {
          const error = await expectFailure(
            rollouts.start({ ...request, ...selection }),
            'rollout_conflict',
          );
          expect(error.details).toEqual({ reason: 'overlap', cutoverId: 'c1' });
        }
        expect(await rollouts.get('r1')).toBeNull();
        expect((await scopesById(gate)).get(scopeName(12))?.policyVersion).toBe('v7');
        // The cutover sent again runs to its end, and frees its selection.
        await gate.cutover(cutover);
        const rollout = await rollouts.start({
          ...request,
          scopes: [scopeName(3), scopeName(12)],
        });
        expect(rollout.status).toBe('completed');
        const scopes = await scopesById(gate);
        expect(scopes.get(scopeName(3))?.policyVersion).toBe('v8');
        expect(scopes.get(scopeName(12))?.policyVersion).toBe('v9');
      },
    );

    it('a scope not pinned yet is pinned by the hash for a worker naming policyVersions, and rolled back with the rest', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      await rollouts.start({
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'new-',
        steps: [50],
      });
      const fresh = Array.from({ length: 16 }, (_, i) => `new-${i}`);
      const grants = await Promise.all(
        fresh.map((scope) =>
          gate.acquire({ scope, holder: 'w', ttlMs: LONG_TTL, policyVersions: ['v7', 'v8'] }),
        ),
      );
      const toV8 = fresh.filter((scope) => admits('r1', scope, 50));
      expect(toV8.length).toBeGreaterThan(0);
      expect(grants.map((g) => g.policyVersion)).toEqual(
        fresh.map((scope) => (toV8.includes(scope) ? 'v8' : 'v7')),
      );
      // A single-version worker meeting the other version is told which one the scope runs.
      const another = Array.from({ length: 40 }, (_, i) => `new-x${i}`).find((scope) =>
        admits('r1', scope, 50),
      )!;
      const error = await expectFailure(
        acquire(gate, another, 'v7-only', { policyVersion: 'v7' }),
        'policy_mismatch',
      );
      expect(error.details).toEqual({ currentPolicyVersion: 'v8' });
      expect(await gate.getScope(another)).toBeNull();
      expect((await rollouts.report('r1'))?.pinnedAtAcquire).toBe(toV8.length);
      await rollouts.rollback({ rolloutId: 'r1' });
      for (const [i, scope] of fresh.entries()) {
        const state = await gate.getScope(scope);
        expect(state?.policyVersion).toBe('v7');
        expect(state?.fence).toBe(toV8.includes(scope) ? grants[i]!.fence + 1 : grants[i]!.fence);
      }
      // After the rollback began, a new scope is pinned to fromPolicy.
      const late = await gate.acquire({
        scope: another,
        holder: 'w',
        ttlMs: LONG_TTL,
        policyVersions: ['v7', 'v8'],
      });
      expect(late.policyVersion).toBe('v7');
    });

    it('a scope already on toPolicy before the rollout is neither moved by a step nor by the rollback', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      const early = await acquire(gate, 'wf-v8-early', 'v8-worker', { policyVersion: 'v8' });
      await startRamp(rollouts, [99]);
      await rollouts.rollback({ rolloutId: 'r1' });
      expect(await gate.getScope('wf-v8-early')).toMatchObject({
        policyVersion: 'v8',
        fence: early.fence,
        holder: 'v8-worker',
      });
      // A completed rollout cannot be rolled back: it is final.
      await rollouts.start({
        rolloutId: 'r2',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [100],
      });
      await expectFailure(rollouts.rollback({ rolloutId: 'r2' }), 'rollout_conflict');
    });

    it('a takeover after a move and a scope deleted mid-rollout are left by the rollback', async () => {
      const { gate } = fx.subject;
      await v7Scopes(gate);
      const rollouts = rolloutsOf(gate);
      await startRamp(rollouts, [60]);
      const [taken, deleted, other] = ramped('r1', 60);
      const takeover = await gate.takeover(taken!, {
        holder: 'operator',
        policyVersion: 'v8',
        reason: 'hand-fixing it',
      });
      await gate.deleteScope(deleted!);
      await acquire(gate, other!, 'v8-worker', { policyVersion: 'v8' });
      const rollback = await rollouts.rollback({ rolloutId: 'r1' });
      expect(rollback.status).toBe('rolled_back');
      expect(await gate.getScope(taken!)).toMatchObject({
        policyVersion: 'v8',
        holder: 'operator',
        fence: takeover.fence,
      });
      expect(await gate.getScope(deleted!)).toMatchObject({ status: 'deleted' });
      expect(await gate.getScope(other!)).toMatchObject({ policyVersion: 'v7', holder: null });
      const report = await rollouts.report('r1');
      expect(report?.rollback?.skipped).toEqual([taken!, deleted!].sort());
      expect(report?.rollback?.moved).toBe(ramped('r1', 60).length - 2);
      const committed = await gate.commit({
        scope: taken!,
        fence: takeover.fence,
        operationId: 'operator-fix',
        writes: [{ name: 'summary', expectRevision: 0, value: 'fixed' }],
      });
      expectCommitted(committed);
    });
  });
}
