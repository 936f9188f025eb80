/**
 * A commit's audit entry names the holder its presented fence was granted to, accepted or
 * rejected, on every store (and through group commit): a stale commit is attributed to the
 * retired holder that made it, never to the scope's current holder; a fence never granted names
 * no holder. Grants are kept when the scope is deleted, so a late commit is still attributed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import type { AuditEntry } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const gates: Fencegate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) await gate.close();
});

describe.each(AREA_STORES)('on $name', (kind) => {
  const stores = storesFor(kind, 'commit_fence_holder');

  describe.each([false, true])('group commit %s', (groupCommit) => {
    it("a stale commit's entry names the holder its fence was granted to", async () => {
      const { store } = await stores.open({ groupCommit });
      const gate = await Fencegate.open({ store });
      gates.push(gate);
      await gate.registerPolicy({ version: 'v2' });
      const a = await gate.acquire({ scope: 'wf', holder: 'worker-a', ttlMs: 60_000 });
      const b = await gate.takeover('wf', { holder: 'worker-b', ttlMs: 60_000 });
      expect([a.fence, b.fence]).toEqual([1, 2]);

      const write = (name: string) => [{ name, expectRevision: 0, value: name }];
      const commit = async (operationId: string, fence: number) => {
        const result = await gate.commit({
          scope: 'wf',
          fence,
          operationId,
          writes: write(operationId),
        });
        const entry = (await gate.audit({ kind: 'commit', limit: 1000 })).items.find(
          (e: AuditEntry) => e.operationId === operationId,
        );
        return { result, entry };
      };

      const byA = await commit('late-a', a.fence);
      expect(byA.result.outcome === 'rejected' && byA.result.error.code).toBe('stale_fence');
      expect(byA.entry).toMatchObject({ outcome: 'rejected', holder: 'worker-a', fence: 1 });
      expect(byA.entry?.currentFence).toBe(2);

      const ahead = await commit('ahead', 7);
      expect(ahead.result.outcome).toBe('rejected');
      expect(ahead.entry).toMatchObject({ outcome: 'rejected', holder: null, fence: 7 });

      const cut = await gate.cutover({ toPolicy: 'v2', holder: 'controller', scopes: ['wf'] });
      expect(cut.fences).toEqual([{ scope: 'wf', fence: 3 }]);
      const byB = await commit('late-b', b.fence);
      expect(byB.entry).toMatchObject({ outcome: 'rejected', holder: 'worker-b', fence: 2 });
      const byController = await commit('current', 3);
      expect(byController.entry).toMatchObject({ outcome: 'committed', holder: 'controller' });

      await gate.deleteScope('wf');
      const afterDelete = await commit('after-delete', a.fence);
      expect(afterDelete.entry).toMatchObject({ outcome: 'rejected', holder: 'worker-a' });

      const verified = await verifyStore(store);
      expect(verified.violations).toEqual([]);
    });
  });
});
