/** Takeover, cancel and delete: the operator transitions, and the fence rule across all of them. */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import {
  leaseStaleFence,
  scopeDeleted,
  scopeNotFound,
  takeoverPolicyMismatch,
  type Refusal,
} from '../../core/refusal-messages.js';
import type { ErrorCode } from '../../errors.js';
import {
  LONG_TTL,
  OperationIds,
  acquire,
  auditAfter,
  expectCommitted,
  expectFailure,
  expectRejected,
  lastSeq,
  put,
  tenantState,
} from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

async function expectOperatorRefused(
  gate: FencegateApi,
  kind: 'takeover' | 'cancel' | 'delete',
  call: () => Promise<unknown>,
  expected: ErrorCode | Refusal,
): Promise<void> {
  const code = typeof expected === 'string' ? expected : expected.code;
  const before = await tenantState(gate);
  const seq = await lastSeq(gate);
  await expectFailure(call(), expected);
  expect(await tenantState(gate)).toEqual(before);
  const entries = await auditAfter(gate, seq);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ kind, outcome: 'rejected', reason: code, scope: SCOPE });
}

export function operatorCases(fx: SubjectFixture): void {
  describe('takeover', () => {
    it('moves the fence past a live lease; the old holder can no longer commit or renew', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const old = await acquire(gate, SCOPE, 'w1');
      const grant = await gate.takeover(SCOPE, { holder: 'op', reason: 'stuck worker' });
      expect(grant).toMatchObject({
        scope: SCOPE,
        fence: 2,
        holder: 'op',
        leaseExpiresAt: null,
        reacquired: false,
      });
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 2,
        holder: 'op',
        leaseExpiresAt: null,
      });
      const entries = await auditAfter(gate);
      expect(entries.at(-1)).toMatchObject({
        kind: 'takeover',
        outcome: 'granted',
        holder: 'op',
        currentFence: 2,
      });

      const stale = await gate.commit({
        scope: SCOPE,
        fence: old.fence,
        operationId: ids.next(),
        writes: [{ name: 'doc', expectRevision: 0, value: 'old' }],
      });
      expect(expectRejected(stale, 'stale_fence').error.details).toMatchObject({ currentFence: 2 });
      await expectFailure(
        gate.renew({ scope: SCOPE, holder: 'w1', fence: old.fence, ttlMs: LONG_TTL }),
        leaseStaleFence(old.fence, 2),
      );
      // A takeover without ttlMs never expires: the operator's grant commits however late.
      await fx.subject.advanceClock(10 * LONG_TTL);
      await put(gate, grant, 'doc', 0, 'new', ids.next());
    });

    it('grants a lease by store time when ttlMs is given', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      const grant = await gate.takeover(SCOPE, { holder: 'op', ttlMs: 5_000 });
      const state = await gate.getScope(SCOPE);
      expect(state?.leaseExpiresAt).toBe(grant.leaseExpiresAt);
      if (fx.capabilities.exactLeaseExpiry) {
        expect(grant.leaseExpiresAt).toBe((state?.updatedAt ?? 0) + 5_000);
      }
    });

    it('creates a scope that never existed at fence 1', async () => {
      const { gate } = fx.subject;
      const grant = await gate.takeover(SCOPE, { holder: 'op', policyVersion: 'v2' });
      expect(grant).toMatchObject({ fence: 1, holder: 'op', policyVersion: 'v2' });
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 1,
        status: 'active',
        policyVersion: 'v2',
      });
    });

    it('keeps the policy pin; naming another policy is policy_mismatch and changes nothing', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1', { policyVersion: 'v1' });
      const kept = await gate.takeover(SCOPE, { holder: 'op' });
      expect(kept).toMatchObject({ fence: 2, policyVersion: 'v1' });
      const same = await gate.takeover(SCOPE, { holder: 'op', policyVersion: 'v1' });
      expect(same).toMatchObject({ fence: 3, policyVersion: 'v1' });
      await expectOperatorRefused(
        gate,
        'takeover',
        () => gate.takeover(SCOPE, { holder: 'op', policyVersion: 'v2' }),
        takeoverPolicyMismatch(SCOPE, 'v1', 'v2'),
      );
    });

    it('re-creates a deleted scope, continuing from its last fence; its records stay tombstoned', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v', ids.next());
      const deleted = await gate.deleteScope(SCOPE);
      expect(deleted.fence).toBe(2);
      const recreated = await gate.takeover(SCOPE, { holder: 'op' });
      expect(recreated.fence).toBe(3);
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 3,
        status: 'active',
        holder: 'op',
      });
      const doc = await gate.getRecord(SCOPE, 'doc');
      expect(doc).toMatchObject({ exists: false, revision: 2, value: null });
      // A new lifetime continues the record's revisions.
      const written = await put(gate, recreated, 'doc', 2, 'again', ids.next());
      expect(written.records).toEqual([
        expect.objectContaining({ name: 'doc', revision: 3, incarnation: 3 }),
      ]);
    });
  });

  describe('cancel', () => {
    it('moves the fence, clears the holder and cancels the pending intents of the scope', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      const other = await acquire(gate, 'wf-2/memory', 'w1');
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          intents: [
            { effectKey: 'notify-1', target: 'crm', payload: { n: 1 } },
            { effectKey: 'notify-2', target: 'crm', payload: { n: 2 } },
          ],
        }),
      );
      expectCommitted(
        await gate.commit({
          scope: other.scope,
          fence: other.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'notify-3', target: 'crm', payload: { n: 3 } }],
        }),
      );

      const result = await gate.cancel(SCOPE, { reason: 'task cancelled' });
      expect(result).toEqual({ fence: 2, cancelledIntents: 2 });
      expect(await gate.getScope(SCOPE)).toMatchObject({
        fence: 2,
        holder: null,
        status: 'active',
      });
      expect((await gate.getIntent('notify-1'))?.status).toBe('cancelled');
      expect((await gate.getIntent('notify-2'))?.status).toBe('cancelled');
      expect((await gate.getIntent('notify-3'))?.status).toBe('pending');
      const entries = await auditAfter(gate);
      expect(entries.filter((entry) => entry.kind === 'cancel')).toEqual([
        expect.objectContaining({ scope: SCOPE, outcome: 'ok', currentFence: 2 }),
      ]);

      const stale = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: ids.next(),
        writes: [{ name: 'doc', expectRevision: 0, value: 'late' }],
      });
      expectRejected(stale, 'stale_fence');
      const next = await acquire(gate, SCOPE, 'w2');
      expect(next.fence).toBe(3);
    });

    it('answers scope_not_found and scope_deleted, changing nothing', async () => {
      const { gate } = fx.subject;
      const cancel = () => gate.cancel(SCOPE);
      await expectOperatorRefused(gate, 'cancel', cancel, scopeNotFound(SCOPE));
      await acquire(gate, SCOPE, 'w1');
      await gate.deleteScope(SCOPE);
      await expectOperatorRefused(gate, 'cancel', cancel, scopeDeleted(SCOPE, 2));
    });
  });

  describe('deleteScope', () => {
    it('moves the fence, marks the scope deleted and tombstones every record', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'a', 0, 'A', ids.next());
      await put(gate, grant, 'a', 1, 'A2', ids.next());
      await put(gate, grant, 'b', 0, 'B', ids.next());
      const removed = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'gone', expectRevision: 0, value: 1 }],
        }),
      );
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [
            { name: 'gone', expectRevision: removed.records[0]?.revision ?? 1, delete: true },
          ],
        }),
      );

      expect(await gate.deleteScope(SCOPE, { reason: 'workflow removed' })).toEqual({ fence: 2 });
      expect(await gate.getScope(SCOPE)).toMatchObject({ fence: 2, status: 'deleted' });
      expect(await gate.getRecord(SCOPE, 'a')).toMatchObject({
        exists: false,
        value: null,
        fingerprint: null,
        revision: 3,
        incarnation: 1,
      });
      expect(await gate.getRecord(SCOPE, 'b')).toMatchObject({ exists: false, revision: 2 });
      const gone = await gate.getRecord(SCOPE, 'gone');
      expect(gone.exists).toBe(false);
      expect(gone.revision).toBeGreaterThanOrEqual(2);
      const records = await gate.listRecords(SCOPE);
      expect(records.map((record) => [record.name, record.exists])).toEqual([
        ['a', false],
        ['b', false],
        ['gone', false],
      ]);
      const entries = await auditAfter(gate);
      expect(entries.at(-1)).toMatchObject({ kind: 'delete', outcome: 'ok', currentFence: 2 });

      const late = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: ids.next(),
        writes: [{ name: 'a', expectRevision: 2, value: 'late' }],
      });
      expectRejected(late, 'scope_deleted');
    });

    it('answers scope_not_found and scope_deleted, changing nothing', async () => {
      const { gate } = fx.subject;
      const remove = () => gate.deleteScope(SCOPE);
      await expectOperatorRefused(gate, 'delete', remove, scopeNotFound(SCOPE));
      await acquire(gate, SCOPE, 'w1');
      await gate.deleteScope(SCOPE);
      await expectOperatorRefused(gate, 'delete', remove, scopeDeleted(SCOPE, 2));
    });
  });

  describe('the fence rule', () => {
    it('never decreases or repeats across grants, revocations, delete and re-create', async () => {
      const { gate } = fx.subject;
      const fences: number[] = [];
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 1_000 });
      fences.push(grant.fence);
      fences.push((await gate.takeover(SCOPE, { holder: 'op', ttlMs: 1_000 })).fence);
      fences.push((await gate.cancel(SCOPE)).fence);
      fences.push((await acquire(gate, SCOPE, 'w2', { ttlMs: 1_000 })).fence);
      fences.push((await gate.deleteScope(SCOPE)).fence);
      fences.push((await gate.takeover(SCOPE, { holder: 'op', ttlMs: 1_000 })).fence);
      await gate.release({ scope: SCOPE, holder: 'op', fence: fences.at(-1) ?? 0 });
      fences.push((await acquire(gate, SCOPE, 'w3', { ttlMs: 1_000 })).fence);
      await fx.subject.advanceClock(5_000);
      fences.push((await acquire(gate, SCOPE, 'w4', { ttlMs: 1_000 })).fence);
      fences.push((await gate.deleteScope(SCOPE)).fence);
      fences.push((await gate.takeover(SCOPE, { holder: 'op' })).fence);

      expect(fences).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await gate.getScope(SCOPE))?.fence).toBe(10);
      const moved = (await auditAfter(gate))
        .filter((entry) => entry.outcome !== 'rejected' && entry.kind !== 'release')
        .map((entry) => entry.currentFence);
      expect(moved).toEqual(fences);
    });
  });
}
