/**
 * Cases for stores that several processes share (capability `sharedAcrossProcesses`): authority
 * granted through one connection binds every other, since nothing is decided from memory.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import { acquire, expectFailure, expectRejected, put } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

async function secondConnection(fx: SubjectFixture): Promise<FencegateApi> {
  const subject = fx.subject;
  if (subject.connectAgain === undefined) {
    throw new Error('a store with sharedAcrossProcesses must provide connectAgain()');
  }
  return subject.connectAgain();
}

export function sharedStoreCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.sharedAcrossProcesses)('shared across connections', () => {
    it('a grant, a takeover and a commit through one connection bind the other', async () => {
      const first = fx.subject.gate;
      const second = await secondConnection(fx);
      try {
        const grant = await acquire(first, SCOPE, 'w1');
        await expectFailure(acquire(second, SCOPE, 'w2'), 'lease_held');
        await put(first, grant, 'doc', 0, 'from first', 'op-1');
        expect(await second.getRecord(SCOPE, 'doc')).toMatchObject({
          value: 'from first',
          revision: 1,
        });

        const taken = await second.takeover(SCOPE, { holder: 'op' });
        const stale = await first.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: 'op-2',
          writes: [{ name: 'doc', expectRevision: 1, value: 'stale' }],
        });
        expect(expectRejected(stale, 'stale_fence').error.details).toMatchObject({
          currentFence: taken.fence,
        });
        expect(await second.getOperation('op-2')).toEqual(await first.getOperation('op-2'));
      } finally {
        await second.close();
      }
    });
  });
}
