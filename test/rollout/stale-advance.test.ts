/**
 * An advance at a revision the rollout has left is refused rollout_conflict, also while the step
 * under way has not finished moving: resuming that step must not answer a stale sender as if its
 * command had applied.
 */
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { memoryGate } from '../helpers/memory-store.js';

describe('a rollout command at an old revision', () => {
  it('is refused rollout_conflict while the step under way is unfinished', async () => {
    const gate = await memoryGate();
    try {
      await gate.registerPolicy({ version: 'v7' });
      await gate.registerPolicy({ version: 'v8' });
      for (let i = 0; i < 40; i++) {
        const scope = `wf-${i}`;
        const { fence } = await gate.acquire({
          scope,
          holder: 'w',
          ttlMs: 60_000,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'w', fence });
      }
      const started = await gate.rollouts.start({
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [25, 50, 100],
      });
      // Another operator's advance, its step planned but not moved yet (as after a crash).
      await gate.store.changeRollout(gate.tenant, {
        action: 'advance',
        rolloutId: 'r1',
        revision: started.revision,
      });
      const stale = await gate.rollouts
        .advance({ rolloutId: 'r1', revision: started.revision })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isFencegateError(stale) ? stale.code : stale).toBe('rollout_conflict');
      // Without a revision, an advance resumes the step under way.
      const resumed = await gate.rollouts.advance({ rolloutId: 'r1' });
      expect(resumed).toMatchObject({ step: 2, revision: started.revision + 1, cutoverDone: true });
    } finally {
      await gate.close();
    }
  });
});
