/**
 * A rollback that names no revision means "roll back the rollout as it is now": an advance that
 * lands between its read and its compare-and-swap must not turn it into a rollout_conflict.
 */
import { describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import type { RolloutChange } from '../../src/core/plan/plan-rollout.js';
import { memoryStore } from '../helpers/memory-store.js';

describe('a rollback without a revision, racing an advance', () => {
  it('rolls back the rollout as the advance left it', async () => {
    const store = memoryStore();
    // Another operator's advance lands between the rollback's read and its compare-and-swap.
    let interfered = false;
    const racing = new Proxy(store, {
      get(target, key) {
        if (key === 'changeRollout') {
          return async (tenant: string, change: RolloutChange) => {
            if (change.action === 'rollback' && !interfered) {
              interfered = true;
              await target.changeRollout(tenant, {
                action: 'advance',
                rolloutId: change.rolloutId,
                revision: change.revision,
              });
            }
            return await target.changeRollout(tenant, change);
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function'
          ? ((value as (...args: unknown[]) => unknown).bind(target) as unknown)
          : value;
      },
    });
    const gate = await Fencegate.open({ store: racing });
    try {
      await gate.registerPolicy({ version: 'v7' });
      await gate.registerPolicy({ version: 'v8' });
      for (let i = 0; i < 40; i += 1) {
        const scope = `wf-${i}`;
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
        steps: [25, 50, 100],
      });
      const rolledBack = await gate.rollouts.rollback({ rolloutId: 'r1' });
      expect(interfered).toBe(true);
      expect(rolledBack.status).toBe('rolled_back');
      const page = await gate.listScopes({ prefix: 'wf-', limit: 100 });
      expect(page.items.every((scope) => scope.policyVersion === 'v7')).toBe(true);
    } finally {
      await gate.close();
    }
  });
});
