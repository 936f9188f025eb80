/** Acquire, renew and release: the worker-side lease rules of SEMANTICS.md. */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import {
  acquireOfDeletedScope,
  acquirePolicyMismatch,
  leaseHeld,
  leaseStaleFence,
  notHolder,
  renewOfReleasedScope,
  scopeNotFound,
  type Refusal,
} from '../../core/refusal-messages.js';
import type { ErrorCode } from '../../errors.js';
import {
  LONG_TTL,
  acquire,
  auditAfter,
  expectFailure,
  expireLease,
  lastSeq,
  tenantState,
} from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

/** A refused lease call changes nothing and leaves one rejected audit entry naming its code. */
async function expectRefused(
  gate: FencegateApi,
  kind: 'acquire' | 'renew' | 'release',
  call: () => Promise<unknown>,
  expected: ErrorCode | Refusal,
): Promise<Record<string, unknown>> {
  const code = typeof expected === 'string' ? expected : expected.code;
  const before = await tenantState(gate);
  const seq = await lastSeq(gate);
  const error = await expectFailure(call(), expected);
  expect(await tenantState(gate)).toEqual(before);
  const entries = await auditAfter(gate, seq);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ kind, outcome: 'rejected', reason: code, scope: SCOPE });
  return error.details;
}

export function leaseCases(fx: SubjectFixture): void {
  describe('acquire', () => {
    it('grants fence 1 on a new scope, with a lease judged by store time', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000 });
      expect(grant).toMatchObject({
        scope: SCOPE,
        fence: 1,
        holder: 'w1',
        policyVersion: null,
        reacquired: false,
      });
      const state = await gate.getScope(SCOPE);
      expect(state).toMatchObject({
        scope: SCOPE,
        fence: 1,
        holder: 'w1',
        leaseExpiresAt: grant.leaseExpiresAt,
        policyVersion: null,
        status: 'active',
      });
      if (fx.capabilities.exactLeaseExpiry) {
        expect(grant.leaseExpiresAt).toBe((state?.updatedAt ?? 0) + 5_000);
      }
      const entries = await auditAfter(gate);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        kind: 'acquire',
        outcome: 'granted',
        scope: SCOPE,
        holder: 'w1',
        currentFence: 1,
        leaseExpiresAt: grant.leaseExpiresAt,
      });
    });

    it('gives the same holder with a live lease its grant back (a lost reply retried)', async () => {
      const { gate } = fx.subject;
      const first = await acquire(gate, SCOPE, 'w1');
      const before = await gate.getScope(SCOPE);
      await fx.subject.advanceClock(1_000);
      const again = await acquire(gate, SCOPE, 'w1');
      expect(again).toEqual({ ...first, reacquired: true });
      expect(await gate.getScope(SCOPE)).toEqual(before);
    });

    it('answers lease_held with the holder and its expiry while another lease is live', async () => {
      const { gate } = fx.subject;
      const first = await acquire(gate, SCOPE, 'w1');
      const details = await expectRefused(
        gate,
        'acquire',
        () => acquire(gate, SCOPE, 'w2'),
        leaseHeld(SCOPE, 'w1', first.leaseExpiresAt, first.fence),
      );
      expect(details).toMatchObject({ holder: 'w1', leaseExpiresAt: first.leaseExpiresAt });
    });

    it('keeps the lease live until leaseExpiresAt and grants the next fence from then on', async () => {
      const { gate } = fx.subject;
      const first = await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000 });
      const state = await gate.getScope(SCOPE);
      const remaining = (first.leaseExpiresAt ?? 0) - (state?.updatedAt ?? 0);
      await fx.subject.advanceClock(remaining - 1);
      await expectFailure(acquire(gate, SCOPE, 'w2'), 'lease_held');
      await fx.subject.advanceClock(1);
      const second = await acquire(gate, SCOPE, 'w2');
      expect(second).toMatchObject({ fence: 2, holder: 'w2', reacquired: false });
    });

    it('grants a released scope again with the next fence', async () => {
      const { gate } = fx.subject;
      const first = await acquire(gate, SCOPE, 'w1');
      await gate.release({ scope: SCOPE, holder: 'w1', fence: first.fence });
      const second = await acquire(gate, SCOPE, 'w2');
      expect(second).toMatchObject({ fence: 2, holder: 'w2' });
    });

    it("pins an unpinned scope to the acquirer's policy; another policy or none is policy_mismatch", async () => {
      const { gate } = fx.subject;
      const first = await acquire(gate, SCOPE, 'w1');
      expect(first.policyVersion).toBeNull();
      await gate.release({ scope: SCOPE, holder: 'w1', fence: first.fence });

      const pinned = await acquire(gate, SCOPE, 'w2', { policyVersion: 'v1' });
      expect(pinned).toMatchObject({ fence: 2, policyVersion: 'v1' });
      expect((await gate.getScope(SCOPE))?.policyVersion).toBe('v1');
      await gate.release({ scope: SCOPE, holder: 'w2', fence: pinned.fence });

      const other = await expectRefused(
        gate,
        'acquire',
        () => acquire(gate, SCOPE, 'w3', { policyVersion: 'v2' }),
        acquirePolicyMismatch(SCOPE, 'v1', 'v2'),
      );
      expect(other).toMatchObject({ currentPolicyVersion: 'v1' });
      const none = await expectRefused(
        gate,
        'acquire',
        () => acquire(gate, SCOPE, 'w3'),
        acquirePolicyMismatch(SCOPE, 'v1', null),
      );
      expect(none).toMatchObject({ currentPolicyVersion: 'v1' });

      const same = await acquire(gate, SCOPE, 'w3', { policyVersion: 'v1' });
      expect(same).toMatchObject({ fence: 3, holder: 'w3', policyVersion: 'v1' });
    });

    it('pins a new scope to the policy of its first acquire', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { policyVersion: 'v7' });
      expect(grant).toMatchObject({ fence: 1, policyVersion: 'v7' });
      expect((await gate.getScope(SCOPE))?.policyVersion).toBe('v7');
    });

    it('answers scope_deleted on a deleted scope', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await gate.deleteScope(SCOPE);
      await expectRefused(
        gate,
        'acquire',
        () => acquire(gate, SCOPE, 'w2'),
        acquireOfDeletedScope(SCOPE, 2),
      );
    });
  });

  describe('renew', () => {
    it('extends the lease of the holder at its fence, keeping the fence', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000 });
      await fx.subject.advanceClock(1_000);
      const renewed = await gate.renew({ scope: SCOPE, holder: 'w1', fence: 1, ttlMs: 5_000 });
      expect(renewed).toMatchObject({ scope: SCOPE, fence: 1, holder: 'w1', reacquired: false });
      expect(renewed.leaseExpiresAt).toBeGreaterThan(grant.leaseExpiresAt ?? 0);
      if (fx.capabilities.exactLeaseExpiry) {
        expect(renewed.leaseExpiresAt).toBe((grant.leaseExpiresAt ?? 0) + 1_000);
      }
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 1,
        holder: 'w1',
        leaseExpiresAt: renewed.leaseExpiresAt,
      });
      const entries = await auditAfter(gate);
      expect(entries.at(-1)).toMatchObject({ kind: 'renew', outcome: 'ok', fence: 1 });
    });

    it('renews a lease that expired but was not replaced', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000 });
      await expireLease(fx.subject, SCOPE);
      await fx.subject.advanceClock(10_000);
      const renewed = await gate.renew({ scope: SCOPE, holder: 'w1', fence: 1, ttlMs: 5_000 });
      expect(renewed).toMatchObject({ fence: 1, holder: 'w1' });
      await expectFailure(acquire(gate, SCOPE, 'w2'), 'lease_held');
    });

    it('answers stale_fence to a fence that is not current, with the current fence', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await gate.takeover(SCOPE, { holder: 'op', ttlMs: LONG_TTL });
      const details = await expectRefused(
        gate,
        'renew',
        () => gate.renew({ scope: SCOPE, holder: 'w1', fence: 1, ttlMs: LONG_TTL }),
        leaseStaleFence(1, 2),
      );
      expect(details).toMatchObject({ currentFence: 2 });
      await expectRefused(
        gate,
        'renew',
        () => gate.renew({ scope: SCOPE, holder: 'op', fence: 3, ttlMs: LONG_TTL }),
        leaseStaleFence(3, 2),
      );
    });

    it('answers not_holder to another holder at the current fence', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await expectRefused(
        gate,
        'renew',
        () => gate.renew({ scope: SCOPE, holder: 'w2', fence: 1, ttlMs: LONG_TTL }),
        notHolder(SCOPE, 'w2', 'w1', 1),
      );
    });

    it('answers not_holder after the lease was released', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await gate.release({ scope: SCOPE, holder: 'w1', fence: 1 });
      await expectRefused(
        gate,
        'renew',
        () => gate.renew({ scope: SCOPE, holder: 'w1', fence: 1, ttlMs: LONG_TTL }),
        renewOfReleasedScope(SCOPE, 1),
      );
    });

    it('answers scope_not_found for a scope that never existed', async () => {
      const { gate } = fx.subject;
      await expectRefused(
        gate,
        'renew',
        () => gate.renew({ scope: SCOPE, holder: 'w1', fence: 1, ttlMs: LONG_TTL }),
        scopeNotFound(SCOPE),
      );
    });
  });

  describe('release', () => {
    it('clears the holder and keeps the fence', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      expect(await gate.release({ scope: SCOPE, holder: 'w1', fence: 1 })).toEqual({
        released: true,
        alreadyReleased: false,
      });
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 1,
        holder: null,
        status: 'active',
      });
      const entries = await auditAfter(gate);
      expect(entries.at(-1)).toMatchObject({ kind: 'release', outcome: 'ok', fence: 1 });
    });

    it('answers a second release as already released, changing nothing', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await gate.release({ scope: SCOPE, holder: 'w1', fence: 1 });
      const before = await tenantState(gate);
      expect(await gate.release({ scope: SCOPE, holder: 'w1', fence: 1 })).toEqual({
        released: true,
        alreadyReleased: true,
      });
      expect(await tenantState(gate)).toEqual(before);
    });

    it('answers stale_fence to an old fence and not_holder to another holder', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      await gate.takeover(SCOPE, { holder: 'op' });
      const details = await expectRefused(
        gate,
        'release',
        () => gate.release({ scope: SCOPE, holder: 'w1', fence: 1 }),
        leaseStaleFence(1, 2),
      );
      expect(details).toMatchObject({ currentFence: 2 });
      await expectRefused(
        gate,
        'release',
        () => gate.release({ scope: SCOPE, holder: 'w1', fence: 2 }),
        notHolder(SCOPE, 'w1', 'op', 2),
      );
      expect(await gate.getScope(SCOPE)).toMatchObject({ fence: 2, holder: 'op' });
    });

    it('answers scope_not_found for a scope that never existed', async () => {
      const { gate } = fx.subject;
      await expectRefused(
        gate,
        'release',
        () => gate.release({ scope: SCOPE, holder: 'w1', fence: 1 }),
        scopeNotFound(SCOPE),
      );
    });
  });
}
