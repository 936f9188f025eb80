/**
 * A rollout's cutovers are named after it (`<rolloutId>/step-N`, `<rolloutId>/rollback`). A plain
 * cutover must not be able to take one of those names while the rollout runs: its rollback (or its
 * next step) would then be refused operation_id_conflict and could never move the scopes back.
 */
import { describe, expect, it } from 'vitest';
import { memoryGate } from '../helpers/memory-store.js';

describe("a plain cutover named like a running rollout's rollback", () => {
  it('cannot stop that rollout from rolling back its scopes', async () => {
    const gate = await memoryGate();
    try {
      await gate.registerPolicy({ version: 'v7' });
      await gate.registerPolicy({ version: 'v8' });
      for (const scope of ['wf-1', 'wf-2', 'wf-3', 'wf-4', 'wf-5', 'wf-6', 'other-1']) {
        const { fence } = await gate.acquire({
          scope,
          holder: 'w',
          ttlMs: 60_000,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'w', fence });
      }
      await gate.rollouts.start({
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [50, 100],
      });
      // An unrelated cutover under the rollout's step or rollback name is refused, and changes
      // nothing, so it cannot block the rollback.
      for (const cutoverId of ['r1/rollback', 'r1/step-2']) {
        await expect(
          gate.cutover({ cutoverId, toPolicy: 'v7', holder: 'ops', prefix: 'other-' }),
        ).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'cutoverId' } });
      }
      expect((await gate.getScope('other-1'))?.policyVersion).toBe('v7');
      const rolledBack = await gate.rollouts.rollback({ rolloutId: 'r1' });
      expect(rolledBack.status).toBe('rolled_back');
      const page = await gate.listScopes({ prefix: 'wf-' });
      expect(page.items.map((scope) => scope.policyVersion)).toEqual(Array(6).fill('v7'));
    } finally {
      await gate.close();
    }
  });
});
