/**
 * Every rejection of SEMANTICS.md's commit table, each through expectCleanRejection (nothing
 * changed, audited, stored under its operationId, replayed on retry), then the check order: a
 * commit that fails several checks reports the first.
 */
import { describe, expect, it } from 'vitest';
import { COMMIT_REJECTION_CODES } from '../../errors.js';
import {
  LONG_TTL,
  OperationIds,
  acquire,
  auditAfter,
  expectCleanRejection,
  expectCommitted,
  expectFailure,
  expectRejected,
  expireLease,
  lastSeq,
  put,
} from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

export function rejectionCases(fx: SubjectFixture): void {
  describe('commit rejections', () => {
    it('covers every rejection code of the catalog', () => {
      // A new code in the catalog needs a case here.
      expect(COMMIT_REJECTION_CODES).toEqual([
        'scope_not_found',
        'scope_deleted',
        'stale_fence',
        'authority_revoked',
        'lease_expired',
        'stale_policy',
        'stale_dependency',
        'stale_revision',
        'incarnation_changed',
        'duplicate_effect',
        'operation_abandoned',
      ]);
    });

    it('scope_not_found: the scope was never created', async () => {
      const { gate } = fx.subject;
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: 1,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
          intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
        },
        'scope_not_found',
      );
      expect(rejected.error.message).toEqual(expect.any(String));
      expect(await gate.getScope(SCOPE)).toBeNull();
      expect(await gate.getIntent('fx-1')).toBeNull();
    });

    it('scope_deleted: the scope is deleted', async () => {
      const { gate } = fx.subject;
      await acquire(gate, SCOPE, 'w1');
      const { fence } = await gate.deleteScope(SCOPE);
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'scope_deleted',
      );
      expect(rejected.error.details).toMatchObject({ currentFence: fence });
    });

    it('stale_fence: a fence older than the current one', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const old = await acquire(gate, SCOPE, 'w1');
      const current = await gate.takeover(SCOPE, { holder: 'w2', ttlMs: LONG_TTL });
      await put(gate, current, 'doc', 0, 'current', ids.next());
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: old.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 1, value: 'stale' }],
        },
        'stale_fence',
      );
      expect(rejected.error.details).toMatchObject({ currentFence: current.fence });
    });

    it('stale_fence below the current fence: decided by the scope alone, its replay answers the same refusal', async () => {
      const { gate } = fx.subject;
      const old = await acquire(gate, SCOPE, 'w1');
      const current = await gate.takeover(SCOPE, { holder: 'w2', ttlMs: LONG_TTL });
      await put(gate, current, 'doc', 0, 'current', 'op-current');
      const seq = await lastSeq(gate);
      const request = {
        scope: SCOPE,
        fence: old.fence,
        operationId: 'op-stale',
        reads: [{ name: 'doc', revision: 1 }],
        writes: [{ name: 'doc', expectRevision: 1, value: 'stale' }],
      };
      const refused = expectRejected(await gate.commit(request), 'stale_fence');
      expect(refused.error.details).toEqual({ currentFence: current.fence });
      const [entry, ...more] = await auditAfter(gate, seq);
      expect(more).toEqual([]);
      // Attributed to the retired holder, without the revisions a worker without authority named.
      expect(entry).toMatchObject({
        outcome: 'rejected',
        reason: 'stale_fence',
        holder: 'w1',
        fence: old.fence,
        currentFence: current.fence,
        records: null,
        reads: null,
      });
      // The fence moves on; the retry still answers the stored refusal and is not audited again.
      await gate.takeover(SCOPE, { holder: 'w3', ttlMs: LONG_TTL });
      expect(await gate.commit(request)).toEqual({ ...refused, replayed: true });
      expect(await gate.getOperation('op-stale')).toEqual(refused);
      const entries = await auditAfter(gate, seq);
      expect(entries.filter((e) => e.operationId === 'op-stale')).toHaveLength(1);
      // Another request under the same operationId is still a conflict, not a replay.
      await expectFailure(
        gate.commit({ ...request, writes: [{ name: 'doc', expectRevision: 1, value: 'other' }] }),
        'operation_id_conflict',
      );
    });

    it('stale_fence: a fence from the future', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence + 1,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'stale_fence',
      );
      expect(rejected.error.details).toMatchObject({ currentFence: grant.fence });
    });

    it('authority_revoked: the scope has no holder (released)', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      await gate.release({ scope: SCOPE, holder: 'w1', fence: grant.fence });
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'authority_revoked',
      );
      expect(rejected.error.details).toMatchObject({ currentFence: grant.fence });
    });

    it('lease_expired: the lease ended by store time and nobody replaced it', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000 });
      await expireLease(fx.subject, SCOPE);
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'lease_expired',
      );
      expect(rejected.error.details).toMatchObject({
        currentFence: grant.fence,
        leaseExpiresAt: grant.leaseExpiresAt,
      });
      // Renewing the expired lease (nobody else was granted) restores the holder's authority.
      await gate.renew({ scope: SCOPE, holder: 'w1', fence: grant.fence, ttlMs: 5_000 });
      await put(gate, grant, 'doc', 0, 'x', 'op-2');
    });

    it("stale_policy: the commit names another policy than the scope's", async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { policyVersion: 'v8' });
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-1',
          policyVersion: 'v7',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'stale_policy',
      );
      expect(rejected.error.details).toMatchObject({ currentPolicyVersion: 'v8' });
      const same = expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-2',
          policyVersion: 'v8',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        }),
      );
      expect(same.records[0]?.revision).toBe(1);
      // Without a policyVersion the check does not apply.
      await put(gate, grant, 'doc', 1, 'y', 'op-3');
    });

    it('stale_dependency: a record read as a dependency changed since', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const policy = await acquire(gate, 'tenant/policy', 'admin');
      await put(gate, policy, 'rules', 0, 'r1', ids.next());
      const grant = await acquire(gate, SCOPE, 'w1');
      const read = await gate.getRecord('tenant/policy', 'rules');
      await put(gate, policy, 'rules', read.revision, 'r2', ids.next());
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          reads: [{ scope: 'tenant/policy', name: 'rules', revision: read.revision }],
          writes: [{ name: 'doc', expectRevision: 0, value: 'based on r1' }],
        },
        'stale_dependency',
      );
      expect(rejected.error.details).toMatchObject({
        name: 'rules',
        expected: read.revision,
        actual: read.revision + 1,
      });
    });

    it('stale_dependency: a dependency in the same scope, defaulting its scope', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'facts', 0, 'f1', ids.next());
      await put(gate, grant, 'facts', 1, 'f2', ids.next());
      await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          reads: [{ name: 'facts', revision: 1 }],
          writes: [{ name: 'summary', expectRevision: 0, value: 's' }],
        },
        'stale_dependency',
      );
    });

    it('stale_revision: the record changed within its lifetime since it was read', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      await put(gate, grant, 'doc', 1, 'v2', ids.next());
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 1, value: 'from v1' }],
        },
        'stale_revision',
      );
      expect(rejected.error.details).toMatchObject({ name: 'doc', expected: 1, actual: 2 });
    });

    it('stale_revision: expectRevision 0 on a record created since', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 0, value: 'blind create' }],
        },
        'stale_revision',
      );
    });

    it('stale_revision: a revision from the future', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 5, value: 'guess' }],
        },
        'stale_revision',
      );
    });

    it('incarnation_changed: the lifetime the writer read was deleted', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 1, delete: true }],
        }),
      );
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 1, value: 'from the deleted lifetime' }],
        },
        'incarnation_changed',
      );
      expect(rejected.error.details).toMatchObject({ name: 'doc', expected: 1, actual: 2 });
    });

    it('incarnation_changed: the lifetime the writer read was deleted and re-created', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      await put(gate, grant, 'doc', 1, 'v2', ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 2, delete: true }],
        }),
      );
      await put(gate, grant, 'doc', 3, 'new lifetime', ids.next());
      for (const expected of [1, 2]) {
        const rejected = await expectCleanRejection(
          gate,
          {
            scope: SCOPE,
            fence: grant.fence,
            operationId: ids.next(),
            writes: [{ name: 'doc', expectRevision: expected, delete: true }],
          },
          'incarnation_changed',
        );
        expect(rejected.error.details).toMatchObject({ name: 'doc', expected, actual: 4 });
      }
    });

    it('stale_revision, not incarnation_changed, for a read of an earlier deletion', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      const remove = async (expectRevision: number): Promise<void> => {
        expectCommitted(
          await gate.commit({
            scope: SCOPE,
            fence: grant.fence,
            operationId: ids.next(),
            writes: [{ name: 'doc', expectRevision, delete: true }],
          }),
        );
      };
      // create 1, delete 2 (a writer reads absence here), create 3, delete 4, create 5
      await put(gate, grant, 'doc', 0, 'first', ids.next());
      await remove(1);
      await put(gate, grant, 'doc', 2, 'second', ids.next());
      await remove(3);
      await put(gate, grant, 'doc', 4, 'third', ids.next());
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 2, value: 'based on absence' }],
        },
        'stale_revision',
      );
      expect(rejected.error.details).toMatchObject({ name: 'doc', expected: 2, actual: 5 });
    });

    it('duplicate_effect: an effectKey that was committed before', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'notify-wf-1', target: 'crm', payload: { n: 1 } }],
        }),
      );
      const rejected = await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
          intents: [
            { effectKey: 'notify-wf-2', target: 'crm', payload: { n: 2 } },
            { effectKey: 'notify-wf-1', target: 'crm', payload: { n: 1 } },
          ],
        },
        'duplicate_effect',
      );
      expect(rejected.error.details).toMatchObject({ effectKey: 'notify-wf-1' });
    });

    it('duplicate_effect: also for an intent that was cancelled, and from another scope', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'notify-1', target: 'crm', payload: 1 }],
        }),
      );
      await gate.cancel(SCOPE);
      const other = await acquire(gate, 'wf-2/memory', 'w1');
      await expectCleanRejection(
        gate,
        {
          scope: other.scope,
          fence: other.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'notify-1', target: 'crm', payload: 1 }],
        },
        'duplicate_effect',
      );
    });
  });

  describe('check order', () => {
    it('scope_deleted before stale_fence', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      await gate.deleteScope(SCOPE);
      await expectCleanRejection(
        gate,
        { scope: SCOPE, fence: grant.fence, operationId: 'op-1' },
        'scope_deleted',
      );
    });

    it('stale_fence before authority_revoked (cancel moved the fence and cleared the holder)', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      await gate.cancel(SCOPE);
      await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-1',
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        },
        'stale_fence',
      );
    });

    it('authority_revoked before lease_expired', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 1_000 });
      await gate.release({ scope: SCOPE, holder: 'w1', fence: grant.fence });
      await fx.subject.advanceClock(10_000);
      await expectCleanRejection(
        gate,
        { scope: SCOPE, fence: grant.fence, operationId: 'op-1' },
        'authority_revoked',
      );
    });

    it('lease_expired before stale_policy, stale_dependency, stale_revision and duplicate_effect', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1', { ttlMs: 5_000, policyVersion: 'v8' });
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
        }),
      );
      await fx.subject.advanceClock(60_000);
      await expectCleanRejection(
        gate,
        {
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          policyVersion: 'v7',
          reads: [{ name: 'doc', revision: 0 }],
          writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
          intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
        },
        'lease_expired',
      );
    });

    it('stale_policy before stale_dependency; stale_dependency before stale_revision; stale_revision before duplicate_effect', async () => {
      const { gate } = fx.subject;
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1', { policyVersion: 'v8' });
      await put(gate, grant, 'doc', 0, 'v1', ids.next());
      await put(gate, grant, 'dep', 0, 'd1', ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
        }),
      );
      const everythingStale = {
        scope: SCOPE,
        fence: grant.fence,
        reads: [{ name: 'dep', revision: 0 }],
        writes: [{ name: 'doc', expectRevision: 0, value: 'x' }],
        intents: [{ effectKey: 'fx-1', target: 'crm', payload: 1 }],
      };
      await expectCleanRejection(
        gate,
        { ...everythingStale, operationId: ids.next(), policyVersion: 'v7' },
        'stale_policy',
      );
      await expectCleanRejection(
        gate,
        { ...everythingStale, operationId: ids.next() },
        'stale_dependency',
      );
      await expectCleanRejection(
        gate,
        { ...everythingStale, operationId: ids.next(), reads: [] },
        'stale_revision',
      );
      await expectCleanRejection(
        gate,
        {
          ...everythingStale,
          operationId: ids.next(),
          reads: [],
          writes: [{ name: 'doc', expectRevision: 1, value: 'x' }],
        },
        'duplicate_effect',
      );
    });
  });
}
