/**
 * Tenants are separate namespaces: tenant B can neither see nor change tenant A's scopes, records,
 * operations, intents or audit entries, and reusing A's names gives B its own objects.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import { scopeNotFound } from '../../core/refusal-messages.js';
import {
  auditAfter,
  acquire,
  expectCommitted,
  expectFailure,
  expectRejected,
  put,
  tenantState,
} from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

/** Tenant A's scope with a record, a pending intent and a stored operation. */
async function seedTenantA(gate: FencegateApi): Promise<void> {
  const grant = await acquire(gate, SCOPE, 'a-worker');
  await put(gate, grant, 'doc', 0, 'tenant A data', 'op-a1');
  expectCommitted(
    await gate.commit({
      scope: SCOPE,
      fence: grant.fence,
      operationId: 'op-a2',
      intents: [{ effectKey: 'notify-1', target: 'crm', payload: 'a' }],
    }),
  );
}

export function isolationCases(fx: SubjectFixture): void {
  describe('tenant isolation', () => {
    it("tenant B sees none of tenant A's scopes, records, operations, intents or audit", async () => {
      const { gate, other } = fx.subject;
      await seedTenantA(gate);
      expect(await other.getScope(SCOPE)).toBeNull();
      expect((await other.listScopes()).items).toEqual([]);
      expect(await other.getRecord(SCOPE, 'doc')).toMatchObject({ exists: false, revision: 0 });
      expect(await other.listRecords(SCOPE)).toEqual([]);
      expect(await other.getOperation('op-a1')).toBeNull();
      expect(await other.getIntent('notify-1')).toBeNull();
      expect((await other.listIntents()).items).toEqual([]);
      expect((await other.audit()).items).toEqual([]);
    });

    it("tenant B cannot change tenant A's objects; the same names give B its own", async () => {
      const { gate, other } = fx.subject;
      await seedTenantA(gate);
      const before = await tenantState(gate);
      const auditBefore = await auditAfter(gate);

      // A's fence means nothing in B's namespace.
      const commit = await other.commit({
        scope: SCOPE,
        fence: 1,
        operationId: 'op-b1',
        writes: [{ name: 'doc', expectRevision: 1, value: 'tenant B overwrite' }],
      });
      expectRejected(commit, 'scope_not_found');
      await expectFailure(
        other.renew({ scope: SCOPE, holder: 'a-worker', fence: 1, ttlMs: 1_000 }),
        scopeNotFound(SCOPE),
      );
      await expectFailure(
        other.release({ scope: SCOPE, holder: 'a-worker', fence: 1 }),
        scopeNotFound(SCOPE),
      );
      await expectFailure(other.cancel(SCOPE), scopeNotFound(SCOPE));
      await expectFailure(other.deleteScope(SCOPE), scopeNotFound(SCOPE));

      // B's own scope of the same name: fence 1, its own records, intents and operation ids.
      const grant = await acquire(other, SCOPE, 'b-worker');
      expect(grant).toMatchObject({ fence: 1, holder: 'b-worker', reacquired: false });
      const own = await other.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'op-a1',
        writes: [{ name: 'doc', expectRevision: 0, value: 'tenant B data' }],
        intents: [{ effectKey: 'notify-1', target: 'crm', payload: 'b' }],
      });
      expect(expectCommitted(own).replayed).toBe(false);
      const taken = await other.takeover(SCOPE, { holder: 'b-operator' });
      expect(taken.fence).toBe(2);
      await other.cancel(SCOPE);
      await other.deleteScope(SCOPE);

      expect(await tenantState(gate)).toEqual(before);
      expect(await auditAfter(gate)).toEqual(auditBefore);
      expect(await gate.getRecord(SCOPE, 'doc')).toMatchObject({ value: 'tenant A data' });
      expect(await gate.getIntent('notify-1')).toMatchObject({ status: 'pending', payload: 'a' });
      expect((await other.getIntent('notify-1'))?.payload).toBe('b');
      expect(await other.getRecord(SCOPE, 'doc')).toMatchObject({ exists: false, revision: 2 });
      const otherAudit = await auditAfter(other);
      expect(otherAudit.length).toBeGreaterThan(0);
      expect(new Set(otherAudit.map((entry) => entry.tenant)).size).toBe(1);
      expect(new Set(auditBefore.map((entry) => entry.tenant)).size).toBe(1);
      expect(otherAudit[0]?.tenant).not.toBe(auditBefore[0]?.tenant);
    });
  });
}
