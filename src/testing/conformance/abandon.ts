/**
 * abandonOperation: the way to settle an unknown outcome as "did not happen". It answers the
 * stored outcome when there is one; otherwise it stores the rejection operation_abandoned, after
 * which every commit with that operationId, whatever its request, is answered that outcome and
 * changes nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  acquire,
  auditAfter,
  expectFailure,
  expectRejected,
  lastSeq,
  put,
  tenantState,
} from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';

export function abandonCases(fx: SubjectFixture): void {
  describe('abandonOperation', () => {
    it('settles an absent operation as operation_abandoned; no commit with it applies afterwards', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const seq = await lastSeq(gate);
      const abandoned = expectRejected(
        await gate.abandonOperation('op-lost', { reason: 'worker gave up' }),
        'operation_abandoned',
      );
      expect(abandoned).toMatchObject({
        operationId: 'op-lost',
        replayed: false,
        error: { details: { operationId: 'op-lost', reason: 'worker gave up' } },
      });
      expect(await gate.getOperation('op-lost')).toEqual(abandoned);
      expect(await auditAfter(gate, seq)).toEqual([
        expect.objectContaining({
          kind: 'commit',
          outcome: 'rejected',
          reason: 'operation_abandoned',
          operationId: 'op-lost',
          scope: null,
        }),
      ]);

      // The commit arrives late (it was in flight all along): answered the abandonment, no change.
      const before = await tenantState(gate);
      const late = await gate.commit({
        scope: SCOPE,
        fence: grant.fence,
        operationId: 'op-lost',
        writes: [{ name: 'doc', expectRevision: 0, value: 'late' }],
        intents: [{ effectKey: 'fx-late', target: 't', payload: 1 }],
      });
      expect(late).toEqual({ ...abandoned, replayed: true });
      expect(await tenantState(gate)).toEqual(before);
      expect(
        (await auditAfter(gate, seq)).filter((entry) => entry.outcome === 'committed'),
      ).toEqual([]);
      // Abandoning again answers the same settled outcome.
      expect(await gate.abandonOperation('op-lost')).toEqual(abandoned);
    });

    it('answers the stored outcome of an operation that has one and changes nothing', async () => {
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const committed = await put(gate, grant, 'doc', 0, 'v1', 'op-done');
      const rejected = expectRejected(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence + 1,
          operationId: 'op-refused',
          writes: [{ name: 'doc', expectRevision: 1, value: 'v2' }],
        }),
        'stale_fence',
      );
      const before = await tenantState(gate);
      const seq = await lastSeq(gate);
      expect(await gate.abandonOperation('op-done')).toEqual(committed);
      expect(await gate.abandonOperation('op-refused')).toEqual(rejected);
      expect(await gate.getOperation('op-done')).toEqual(committed);
      expect(await tenantState(gate)).toEqual(before);
      expect(await auditAfter(gate, seq)).toEqual([]);
    });

    it('abandons within the tenant only', async () => {
      const { gate, other } = fx.subject;
      expectRejected(await gate.abandonOperation('op-shared'), 'operation_abandoned');
      expect(await other.getOperation('op-shared')).toBeNull();
      const grant = await acquire(other, SCOPE, 'w1');
      await put(other, grant, 'doc', 0, 'theirs', 'op-shared');
    });

    it('refuses a malformed operationId or reason with invalid_request, storing nothing', async () => {
      const { gate } = fx.subject;
      await expectFailure(gate.abandonOperation('bad id'), 'invalid_request');
      await expectFailure(
        gate.abandonOperation('op-1', { reason: 'x'.repeat(2000) }),
        'invalid_request',
      );
      await expectFailure(
        gate.abandonOperation('op-1', { why: 'unknown field' } as never),
        'invalid_request',
      );
      expect(await gate.getOperation('op-1')).toBeNull();
    });
  });
}
