/**
 * Completions in batches (Store.completeIntents), for subjects that hand over their Store: each
 * completion is planned as completeIntent plans it, in order, with its own answer and audit entry;
 * a refusal answers that completion alone.
 */
import { describe, expect, it } from 'vitest';
import type { IntentCompletionResult } from '../../types.js';
import { OperationIds, acquire, auditAfter, expectCommitted } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SCOPE = 'batch/memory';

async function commitAndClaim(gate: ConformanceGate, effectKeys: string[]) {
  const grant = await acquire(gate, SCOPE, 'w1');
  expectCommitted(
    await gate.commit({
      scope: SCOPE,
      fence: grant.fence,
      operationId: new OperationIds(`op-${effectKeys[0]!}`).next(),
      intents: effectKeys.map((effectKey) => ({
        effectKey,
        target: 'crm',
        payload: { effectKey },
      })),
    }),
  );
  return gate.claimIntents({ dispatcher: 'd1', ttlMs: 10_000, limit: effectKeys.length });
}

/** What each completion came to: its new status, or its refusal's code. */
function verdicts(results: IntentCompletionResult[]): string[] {
  return results.map((result) => (result.ok ? result.intent.status : result.error.code));
}

export function batchCompletionCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('completions in batches', () => {
    it('answers each completion on its own, in order; a refusal never undoes the others', async () => {
      const { store, tenant } = fx.store;
      const { gate } = fx.subject;
      const claimed = await commitAndClaim(gate, ['bc-1', 'bc-2', 'bc-3']);
      const fenceOf = (key: string) => claimed.find((i) => i.effectKey === key)!.claimFence;

      const results = await store.completeIntents(tenant, [
        {
          effectKey: 'bc-1',
          claimFence: fenceOf('bc-1'),
          outcome: 'delivered',
          providerRef: 'p-1',
        },
        { effectKey: 'bc-2', claimFence: fenceOf('bc-2') + 1, outcome: 'delivered' },
        { effectKey: 'bc-none', claimFence: 1, outcome: 'delivered' },
        {
          effectKey: 'bc-3',
          claimFence: fenceOf('bc-3'),
          outcome: 'failed',
          retryable: true,
          retryAfterMs: 5_000,
          error: 'HTTP 503',
        },
        // The same intent again: it sees the delivery recorded just before it.
        { effectKey: 'bc-1', claimFence: fenceOf('bc-1'), outcome: 'failed' },
      ]);

      expect(verdicts(results)).toEqual([
        'delivered',
        'stale_claim',
        'not_found',
        'pending',
        'stale_claim',
      ]);
      expect(results[0]).toMatchObject({ ok: true, intent: { providerRef: 'p-1' } });
      expect(await gate.getIntent('bc-1')).toMatchObject({
        status: 'delivered',
        providerRef: 'p-1',
      });
      expect(await gate.getIntent('bc-2')).toMatchObject({ status: 'claimed', claimedBy: 'd1' });
      expect(await gate.getIntent('bc-3')).toMatchObject({
        status: 'pending',
        lastError: 'HTTP 503',
      });

      const completions = (await auditAfter(gate))
        .filter((entry) => entry.kind === 'intent' && entry.outcome !== 'claimed')
        .filter((entry) => entry.outcome !== 'pending' || entry.reason !== null)
        .map((entry) => [entry.effectKey, entry.outcome, entry.reason]);
      // Each completion's own entry, refusals included (not_found has no intent to audit).
      expect(completions).toEqual([
        ['bc-1', 'delivered', null],
        ['bc-2', 'rejected', 'stale_claim'],
        ['bc-3', 'pending', 'retryable_failure'],
        ['bc-1', 'rejected', 'stale_claim'],
      ]);
    });

    it("another tenant's intents are not found, and the batch's own are still recorded", async () => {
      const { store, otherTenant } = fx.store;
      const { gate, other } = fx.subject;
      const [mine] = await commitAndClaim(gate, ['bc-a']);
      const [theirs] = await commitAndClaim(other, ['bc-b']);

      const results = await store.completeIntents(otherTenant, [
        { effectKey: 'bc-a', claimFence: mine!.claimFence, outcome: 'delivered' },
        { effectKey: 'bc-b', claimFence: theirs!.claimFence, outcome: 'delivered' },
      ]);

      expect(verdicts(results)).toEqual(['not_found', 'delivered']);
      expect(await gate.getIntent('bc-a')).toMatchObject({ status: 'claimed' });
      expect(await other.getIntent('bc-b')).toMatchObject({ status: 'delivered' });
    });
  });
}
