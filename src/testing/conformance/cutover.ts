/**
 * Policies, cutover and the jobs ledger (SEMANTICS.md, "Policies, cutover and rollouts"; ACCEPTANCE.md B1 to
 * B5): immutable policy versions, one durable step per scope, idempotent and resumable by
 * cutoverId, and a report whose staleAccepted is 0.
 */
import { describe, expect, it } from 'vitest';
import {
  cutoverIdConflict,
  policyConflict,
  unregisteredCutoverPolicy,
} from '../../core/refusal-messages.js';
import { CUTOVER_CHUNK } from '../../core/cutover-rules.js';
import type { CommitResult, Grant } from '../../types.js';
import {
  OperationIds,
  acquire,
  auditAfter,
  expectCommitted,
  expectFailure,
  expectRejected,
  tenantState,
} from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const V7 = { version: 'v7', digest: 'sha256:v7', description: 'compaction v7' };
const V8 = { version: 'v8', digest: 'sha256:v8', description: 'compaction v8' };

async function registerBoth(gate: ConformanceGate): Promise<void> {
  await gate.registerPolicy(V7);
  await gate.registerPolicy(V8);
}

/** `count` scopes `wf-N/memory`, each held by a v7 worker. */
async function v7Workers(gate: ConformanceGate, count: number): Promise<Grant[]> {
  const grants: Grant[] = [];
  for (let start = 0; start < count; start += 100) {
    const batch = Array.from({ length: Math.min(100, count - start) }, (_, k) => start + k);
    grants.push(
      ...(await Promise.all(
        batch.map((i) =>
          acquire(gate, `wf-${String(i).padStart(5, '0')}/memory`, `v7-w${i}`, {
            policyVersion: 'v7',
          }),
        ),
      )),
    );
  }
  return grants;
}

/** A first write of record `summary` under `grant`: what a compaction job commits. */
function writeSummary(
  gate: ConformanceGate,
  grant: { scope: string; fence: number },
  operationId: string,
  value: string,
): Promise<CommitResult> {
  return gate.commit({
    scope: grant.scope,
    fence: grant.fence,
    operationId,
    writes: [{ name: 'summary', expectRevision: 0, value }],
  });
}

export function cutoverCases(fx: SubjectFixture): void {
  describe('policies', () => {
    it('registers a version once; the same again is not created, another digest is policy_conflict', async () => {
      const { gate } = fx.subject;
      const first = await gate.registerPolicy(V7);
      expect(first).toMatchObject({ created: true, policy: { ...V7 } });
      const again = await gate.registerPolicy(V7);
      expect(again).toEqual({ created: false, policy: first.policy });
      await expectFailure(
        gate.registerPolicy({ ...V7, digest: 'sha256:other' }),
        policyConflict('v7', 'sha256:v7'),
      );
      await gate.registerPolicy(V8);
      expect((await gate.listPolicies()).map((p) => [p.version, p.digest])).toEqual([
        ['v7', 'sha256:v7'],
        ['v8', 'sha256:v8'],
      ]);
      expect(await fx.subject.other.listPolicies()).toEqual([]);
    });
  });

  describe('cutover', () => {
    it('moves each listed scope in one step: fence+1, the controller, the new policy; old tokens are stale', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a, b, untouched] = await v7Workers(gate, 3);
      const result = await gate.cutover({
        cutoverId: 'c-1',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: [a!.scope, b!.scope],
      });
      expect(result).toEqual({
        cutoverId: 'c-1',
        toPolicy: 'v8',
        scopes: 2,
        fences: [
          { scope: a!.scope, fence: 2 },
          { scope: b!.scope, fence: 2 },
        ],
        skipped: [],
      });
      for (const scope of [a!.scope, b!.scope]) {
        expect(await gate.getScope(scope)).toMatchObject({
          fence: 2,
          holder: 'controller-v8',
          policyVersion: 'v8',
        });
      }
      expect(await gate.getScope(untouched!.scope)).toMatchObject({
        fence: 1,
        policyVersion: 'v7',
      });
      const stale = await writeSummary(
        gate,
        { scope: a!.scope, fence: a!.fence },
        'late-v7',
        'v7 compaction',
      );
      expectRejected(stale, 'stale_fence');
      const live = await writeSummary(gate, { scope: a!.scope, fence: 2 }, 'v8-1', 'v8 compaction');
      expectCommitted(live);
      const steps = (await auditAfter(gate)).filter((entry) => entry.kind === 'cutover');
      expect(steps.map((entry) => [entry.scope, entry.currentFence, entry.policyVersion])).toEqual([
        [a!.scope, 2, 'v8'],
        [b!.scope, 2, 'v8'],
      ]);
    });

    it('selects scopes by prefix, moving every one across chunks of the cutover', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const grants = await v7Workers(gate, CUTOVER_CHUNK + 1);
      await acquire(gate, 'other/memory', 'v7-x', { policyVersion: 'v7' });
      const result = await gate.cutover({
        cutoverId: 'c-prefix',
        toPolicy: 'v8',
        holder: 'controller-v8',
        prefix: 'wf-',
      });
      expect(result.scopes).toBe(grants.length);
      expect(result.fences).toEqual(grants.map((g) => ({ scope: g.scope, fence: 2 })));
      expect(await gate.getScope('other/memory')).toMatchObject({ fence: 1, policyVersion: 'v7' });
      expect(await gate.cutoverReport('c-prefix')).toMatchObject({
        status: 'completed',
        scopes: grants.length,
      });
    });

    it('is idempotent by cutoverId: a repeat answers the same and bumps no scope twice', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a] = await v7Workers(gate, 1);
      const request = {
        cutoverId: 'c-1',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: [a!.scope],
      };
      const first = await gate.cutover(request);
      const before = await tenantState(gate);
      expect(await gate.cutover(request)).toEqual(first);
      expect(await tenantState(gate)).toEqual(before);
      await expectFailure(
        gate.cutover({ ...request, holder: 'another-controller' }),
        cutoverIdConflict(request.cutoverId),
      );
      expect(await tenantState(gate)).toEqual(before);
    });

    it('two callers of one cutoverId at once resume one plan: each scope moves exactly once', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const grants = await v7Workers(gate, 20);
      const request = {
        cutoverId: 'c-race',
        toPolicy: 'v8',
        holder: 'controller-v8',
        prefix: 'wf-',
      };
      const [one, two] = await Promise.all([gate.cutover(request), gate.cutover(request)]);
      expect(two).toEqual(one);
      expect(one.fences).toEqual(grants.map((g) => ({ scope: g.scope, fence: 2 })));
      const steps = (await auditAfter(gate)).filter((entry) => entry.kind === 'cutover');
      expect(steps).toHaveLength(grants.length);
    });

    it('refuses a policy that is not registered with invalid_request, changing nothing', async () => {
      const { gate } = fx.subject;
      await gate.registerPolicy(V7);
      const [a] = await v7Workers(gate, 1);
      const before = await tenantState(gate);
      await expectFailure(
        gate.cutover({ cutoverId: 'c-1', toPolicy: 'v9', holder: 'c', scopes: [a!.scope] }),
        unregisteredCutoverPolicy('v9'),
      );
      expect(await tenantState(gate)).toEqual(before);
      expect(await gate.cutoverReport('c-1')).toBeNull();
    });

    it('B3 and B4: a rollback is a newer fence; a v7 worker cannot acquire v8 scopes', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a] = await v7Workers(gate, 1);
      await gate.cutover({
        cutoverId: 'to-v8',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: [a!.scope],
        leaseTtlMs: 1_000,
      });
      await fx.subject.advanceClock(1_000);
      await expectFailure(
        acquire(gate, a!.scope, 'v7-w0', { policyVersion: 'v7' }),
        'policy_mismatch',
      );
      const back = await gate.cutover({
        cutoverId: 'back-to-v7',
        toPolicy: 'v7',
        holder: 'controller-v7',
        scopes: [a!.scope],
      });
      expect(back.fences).toEqual([{ scope: a!.scope, fence: 3 }]);
      const old = await writeSummary(gate, { scope: a!.scope, fence: a!.fence }, 'old-v7', 'old');
      expectRejected(old, 'stale_fence');
    });

    it("the report classifies the old generation's jobs by last state and counts stale attempts: staleAccepted 0", async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds('job');
      await registerBoth(gate);
      const [a, b] = await v7Workers(gate, 2);
      const job = (jobId: string, grant: Grant, state: 'running' | 'reserved' | 'queued') => ({
        jobId,
        scope: grant.scope,
        policyVersion: 'v7',
        fence: grant.fence,
        state,
        attempt: 1,
      });
      await gate.recordJobEvents([
        job('j1', a!, 'queued'),
        job('j2', a!, 'reserved'),
        job('j3', b!, 'queued'),
      ]);
      // A job keeps its latest state.
      await gate.recordJobEvents([job('j1', a!, 'running'), job('j3', b!, 'running')]);
      await gate.cutover({
        cutoverId: 'c-1',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: [a!.scope, b!.scope],
      });
      for (const grant of [a!, b!]) {
        const late = await writeSummary(
          gate,
          { scope: grant.scope, fence: grant.fence },
          ids.next(),
          'v7',
        );
        expectRejected(late, 'stale_fence');
      }
      expectCommitted(await writeSummary(gate, { scope: a!.scope, fence: 2 }, ids.next(), 'v8'));
      const report = await gate.cutoverReport('c-1');
      expect(report).toMatchObject({
        cutoverId: 'c-1',
        toPolicy: 'v8',
        holder: 'controller-v8',
        status: 'completed',
        scopes: 2,
        staleAttempts: 2,
        staleAccepted: 0,
        staleRejectedByReason: { stale_fence: 2 },
        liveCommits: 1,
        skipped: [],
      });
      expect(report?.oldJobs.total).toBe(3);
      expect(report?.oldJobs.byState).toMatchObject({ running: 2, reserved: 1 });
      expect(await fx.subject.other.cutoverReport('c-1')).toBeNull();
    });

    it('a stale commit retried under its operationId is one stale attempt, answered alike each time', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a] = await v7Workers(gate, 1);
      await gate.cutover({
        cutoverId: 'c-r',
        toPolicy: 'v8',
        holder: 'controller-v8',
        scopes: [a!.scope],
      });
      const first = expectRejected(
        await writeSummary(gate, { scope: a!.scope, fence: a!.fence }, 'retried-v7', 'v7'),
        'stale_fence',
      );
      // The scope moves on before the retries: they still answer the refusal stored first.
      await gate.takeover(a!.scope, { holder: 'v8-w', ttlMs: 60_000 });
      for (let retry = 0; retry < 2; retry++) {
        const again = await writeSummary(
          gate,
          { scope: a!.scope, fence: a!.fence },
          'retried-v7',
          'v7',
        );
        expect(again).toEqual({ ...first, replayed: true });
      }
      const report = await gate.cutoverReport('c-r');
      expect(report).toMatchObject({
        staleAttempts: 1,
        staleAccepted: 0,
        staleRejectedByReason: { stale_fence: 1 },
      });
    });

    it('a timed job event sent again never undoes a later state reported for the same instant', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a] = await v7Workers(gate, 1);
      const at = 1_000_000;
      const event = (state: 'running' | 'succeeded', attempt = 1) => ({
        jobId: 'j-tie',
        scope: a!.scope,
        policyVersion: 'v7',
        fence: a!.fence,
        state,
        attempt,
        at,
      });
      // A resend of the first event after the second, all at one instant: the job stays succeeded.
      await gate.recordJobEvents([event('running')]);
      await gate.recordJobEvents([event('succeeded')]);
      await gate.recordJobEvents([event('running')]);
      // A later attempt at the same instant is later, whatever its state.
      await gate.recordJobEvents([event('running', 2)]);
      await gate.recordJobEvents([event('succeeded')]);
      await gate.cutover({ cutoverId: 'c-tie', toPolicy: 'v8', holder: 'h8', scopes: [a!.scope] });
      const report = await gate.cutoverReport('c-tie');
      expect(report?.oldJobs.byState).toMatchObject({ running: 1 });
      expect(report?.oldJobs.total).toBe(1);
    });

    it('lists cutovers newest first with how many scopes each covers and moved', async () => {
      const { gate } = fx.subject;
      await registerBoth(gate);
      const [a, b] = await v7Workers(gate, 2);
      await gate.cutover({ cutoverId: 'c-1', toPolicy: 'v8', holder: 'h8', scopes: [a!.scope] });
      await fx.subject.advanceClock(1);
      await gate.cutover({
        cutoverId: 'c-2',
        toPolicy: 'v7',
        holder: 'h7',
        scopes: [a!.scope, b!.scope],
      });
      const page = await gate.listCutovers();
      expect(page.nextCursor).toBeNull();
      expect(page.items.map((c) => [c.cutoverId, c.scopes, c.moved])).toEqual([
        ['c-2', 2, 2],
        ['c-1', 1, 1],
      ]);
      const first = await gate.listCutovers({ limit: 1 });
      expect(first.items.map((c) => c.cutoverId)).toEqual(['c-2']);
      const next = await gate.listCutovers({ limit: 1, cursor: first.nextCursor! });
      expect(next.items.map((c) => c.cutoverId)).toEqual(['c-1']);
      expect((await fx.subject.other.listCutovers()).items).toEqual([]);
    });
  });
}
