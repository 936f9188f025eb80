/**
 * Dispatch: intents claimed under a claim fence and a lease, completed only under the current
 * claim fence (SEMANTICS.md, "Intents"). A paused dispatcher cannot overwrite a newer attempt.
 */
import { describe, expect, it } from 'vitest';
import { intentNotFound, staleClaim } from '../../core/refusal-messages.js';
import type { CompleteIntentRequest, Intent, IntentRequest } from '../../types.js';
import { cancelIntentsPageCases } from './cancel-intents-pages.js';
import { scopeCancelPageCases } from './scope-cancel-pages.js';
import { OperationIds, acquire, auditAfter, expectCommitted, expectFailure } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';
const CLAIM_TTL = 10_000;

function intent(effectKey: string, target = 'crm'): IntentRequest {
  return { effectKey, target, payload: { effectKey } };
}

/** Commits `intents` under a fresh grant on `scope`. */
async function commitIntents(
  gate: ConformanceGate,
  intents: IntentRequest[],
  scope = SCOPE,
): Promise<void> {
  const grant = await acquire(gate, scope, 'w1');
  expectCommitted(
    await gate.commit({
      scope,
      fence: grant.fence,
      operationId: new OperationIds(`op-${intents[0]!.effectKey}`).next(),
      intents,
    }),
  );
}

function claim(gate: ConformanceGate, dispatcher: string, limit = 10, targets?: string[]) {
  return gate.claimIntents({
    dispatcher,
    ttlMs: CLAIM_TTL,
    limit,
    ...(targets === undefined ? {} : { targets }),
  });
}

/** Commits intent fx-1, claims it as dispatcher d1 and completes that claim with `outcome`. */
async function firstAttempt(
  gate: ConformanceGate,
  outcome: Omit<CompleteIntentRequest, 'claimFence'>,
): Promise<Intent> {
  await commitIntents(gate, [intent('fx-1')]);
  const [claimed] = await claim(gate, 'd1');
  return gate.completeIntent('fx-1', { claimFence: claimed!.claimFence, ...outcome });
}

export function dispatchCases(fx: SubjectFixture): void {
  describe('dispatch', () => {
    it('claims a pending intent under claim fence 1 and a lease; a live claim is not claimed again', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, [intent('fx-1')]);
      const [claimed, ...more] = await claim(gate, 'd1');
      expect(more).toEqual([]);
      expect(claimed).toMatchObject({
        effectKey: 'fx-1',
        scope: SCOPE,
        status: 'claimed',
        claimFence: 1,
        claimedBy: 'd1',
      });
      expect(claimed!.claimExpiresAt).toBe(claimed!.updatedAt + CLAIM_TTL);
      expect(await gate.getIntent('fx-1')).toEqual(claimed);
      expect(await claim(gate, 'd2')).toEqual([]);
    });

    it('records a delivery under the current claim fence; a second completion is stale_claim', async () => {
      const { gate } = fx.subject;
      const delivered = await firstAttempt(gate, {
        outcome: 'delivered',
        providerRef: 'provider-42',
      });
      expect(delivered).toMatchObject({
        effectKey: 'fx-1',
        status: 'delivered',
        providerRef: 'provider-42',
        claimFence: 1,
      });
      expect(await gate.getIntent('fx-1')).toEqual(delivered);
      await expectFailure(
        gate.completeIntent('fx-1', { claimFence: 1, outcome: 'failed' }),
        staleClaim('fx-1', 1, 1, 'delivered'),
      );
      expect(await gate.getIntent('fx-1')).toEqual(delivered);
      expect(await claim(gate, 'd1')).toEqual([]);
    });

    it('claims an intent again once its claim expired; the paused first claim is stale_claim', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, [intent('fx-1')]);
      const [first] = await claim(gate, 'd1');
      await fx.subject.advanceClock(CLAIM_TTL);
      const [second] = await claim(gate, 'd2');
      expect(second).toMatchObject({ effectKey: 'fx-1', claimFence: 2, claimedBy: 'd2' });

      await expectFailure(
        gate.completeIntent('fx-1', { claimFence: first!.claimFence, outcome: 'delivered' }),
        staleClaim('fx-1', 1, 2, 'claimed'),
      );
      expect(await gate.getIntent('fx-1')).toMatchObject({ status: 'claimed', claimFence: 2 });
      const done = await gate.completeIntent('fx-1', { claimFence: 2, outcome: 'delivered' });
      expect(done).toMatchObject({ status: 'delivered', claimFence: 2 });
    });

    it('a retryable failure returns the intent to pending, due again after its backoff', async () => {
      const { gate } = fx.subject;
      const failed = await firstAttempt(gate, {
        outcome: 'failed',
        retryable: true,
        retryAfterMs: 5_000,
        error: 'HTTP 503',
      });
      expect(failed).toMatchObject({ status: 'pending', lastError: 'HTTP 503' });
      expect(failed.nextAttemptAt).toBe(failed.updatedAt + 5_000);
      expect(await claim(gate, 'd1')).toEqual([]);
      await fx.subject.advanceClock(5_000);
      const [again] = await claim(gate, 'd1');
      expect(again).toMatchObject({ effectKey: 'fx-1', status: 'claimed', claimFence: 2 });
    });

    it('a final failure is failed and never claimed again', async () => {
      const { gate } = fx.subject;
      const failed = await firstAttempt(gate, {
        outcome: 'failed',
        error: 'HTTP 400',
      });
      expect(failed).toMatchObject({ status: 'failed', lastError: 'HTTP 400' });
      await fx.subject.advanceClock(CLAIM_TTL * 10);
      expect(await claim(gate, 'd1')).toEqual([]);
    });

    it('an unknown outcome is claimed again for reconciliation, under the same effectKey', async () => {
      const { gate } = fx.subject;
      const unknown = await firstAttempt(gate, {
        outcome: 'unknown',
        error: 'timeout',
      });
      expect(unknown).toMatchObject({ status: 'unknown', unknownOutcomes: 1 });
      const [reconcile] = await claim(gate, 'd2');
      expect(reconcile).toMatchObject({ effectKey: 'fx-1', status: 'claimed', claimFence: 2 });
      const settled = await gate.completeIntent('fx-1', {
        claimFence: 2,
        outcome: 'needs_attention',
        error: 'the provider cannot say',
      });
      expect(settled).toMatchObject({ effectKey: 'fx-1', status: 'needs_attention' });
      expect(await claim(gate, 'd2')).toEqual([]);
    });

    it('claims at most limit intents, only of the targets asked for', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, [
        intent('fx-1', 'crm'),
        intent('fx-2', 'mail'),
        intent('fx-3', 'crm'),
        intent('fx-4', 'crm'),
      ]);
      const mail = await claim(gate, 'd1', 10, ['mail']);
      expect(mail.map((i) => i.effectKey)).toEqual(['fx-2']);
      const first = await claim(gate, 'd1', 2, ['crm']);
      expect(first).toHaveLength(2);
      const rest = await claim(gate, 'd1', 10, ['crm']);
      expect([...first, ...rest].map((i) => i.effectKey).sort()).toEqual(['fx-1', 'fx-3', 'fx-4']);
    });

    it('answers not_found for an intent that does not exist, and stale_claim for a claim never made', async () => {
      const { gate } = fx.subject;
      await expectFailure(
        gate.completeIntent('fx-none', { claimFence: 1, outcome: 'delivered' }),
        intentNotFound('fx-none'),
      );
      await commitIntents(gate, [intent('fx-1')]);
      await expectFailure(
        gate.completeIntent('fx-1', { claimFence: 1, outcome: 'delivered' }),
        staleClaim('fx-1', 1, 0, 'pending'),
      );
      expect(await gate.getIntent('fx-1')).toMatchObject({ status: 'pending', claimFence: 0 });
    });

    it('cancel moves only pending intents; a claimed one may still be delivered', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, [intent('fx-1'), intent('fx-2')]);
      const [claimed] = await claim(gate, 'd1', 1);
      const pendingKey = claimed!.effectKey === 'fx-1' ? 'fx-2' : 'fx-1';
      expect(await gate.cancel(SCOPE, { reason: 'stop' })).toMatchObject({ cancelledIntents: 1 });
      expect(await gate.getIntent(pendingKey)).toMatchObject({ status: 'cancelled' });
      expect(await gate.getIntent(claimed!.effectKey)).toMatchObject({ status: 'claimed' });
      const delivered = await gate.completeIntent(claimed!.effectKey, {
        claimFence: claimed!.claimFence,
        outcome: 'delivered',
      });
      expect(delivered.status).toBe('delivered');
      expect(await claim(gate, 'd1')).toEqual([]);
    });

    it('cancelIntents: the holder cancels the pending intents of the runs it superseded, and only those', async () => {
      const { gate } = fx.subject;
      const commitAt = async (fence: number, intents: IntentRequest[]) =>
        expectCommitted(
          await gate.commit({
            scope: SCOPE,
            fence,
            operationId: new OperationIds(`op-${intents[0]!.effectKey}`).next(),
            intents,
          }),
        );
      const older = await acquire(gate, SCOPE, 'run-0');
      await commitAt(older.fence, [intent('fx-0')]);
      const superseded = await gate.takeover(SCOPE, { holder: 'run-1', ttlMs: 60_000 });
      await commitAt(superseded.fence, [intent('fx-1', 'mail'), intent('fx-2')]);
      const [claimed] = await claim(gate, 'd1', 1, ['mail']);
      const current = await gate.takeover(SCOPE, { holder: 'run-2', ttlMs: 60_000 });
      await commitAt(current.fence, [intent('fx-3')]);
      const request = {
        scope: SCOPE,
        holder: 'run-2',
        fence: current.fence,
        committedFrom: superseded.fence,
      };
      expect(await gate.cancelIntents(request)).toEqual({ cancelled: ['fx-2'], nextCursor: null });
      // The same request again, as a client resends it after a lost reply, changes nothing more
      // and answers the same: the range's intents that are cancelled.
      expect(await gate.cancelIntents(request)).toEqual({ cancelled: ['fx-2'], nextCursor: null });
      const statuses = await Promise.all(
        ['fx-0', 'fx-1', 'fx-2', 'fx-3'].map(async (key) => (await gate.getIntent(key))?.status),
      );
      expect(claimed?.effectKey).toBe('fx-1');
      expect(statuses).toEqual(['pending', 'claimed', 'cancelled', 'pending']);
      expect(await gate.getScope(SCOPE)).toMatchObject({ fence: current.fence, holder: 'run-2' });
      // A superseded run cannot cancel anything: it is not the holder at the current fence.
      await expect(
        gate.cancelIntents({
          ...request,
          holder: 'run-1',
          fence: superseded.fence,
          committedFrom: 0,
        }),
      ).rejects.toMatchObject({ code: 'stale_fence' });
      expect((await gate.getIntent('fx-0'))?.status).toBe('pending');
    });

    cancelIntentsPageCases(fx);

    scopeCancelPageCases(fx);

    it("claims within the tenant only: another tenant's dispatcher sees nothing", async () => {
      const { gate, other } = fx.subject;
      await commitIntents(gate, [intent('fx-1')]);
      expect(await claim(other, 'd1')).toEqual([]);
      await expectFailure(
        other.completeIntent('fx-1', { claimFence: 1, outcome: 'delivered' }),
        intentNotFound('fx-1'),
      );
      expect(await gate.getIntent('fx-1')).toMatchObject({ status: 'pending' });
    });

    it('audits every intent transition with its new status, in order', async () => {
      const { gate } = fx.subject;
      await commitIntents(gate, [intent('fx-1')]);
      const [first] = await claim(gate, 'd1');
      await gate.completeIntent('fx-1', {
        claimFence: first!.claimFence,
        outcome: 'failed',
        retryable: true,
        retryAfterMs: 0,
      });
      const [second] = await claim(gate, 'd1');
      await gate.completeIntent('fx-1', { claimFence: second!.claimFence, outcome: 'delivered' });
      const transitions = (await auditAfter(gate))
        .filter((entry) => entry.kind === 'intent' && entry.effectKey === 'fx-1')
        .map((entry) => ({ scope: entry.scope, outcome: entry.outcome }));
      expect(transitions).toEqual(
        // Created pending by the commit, then each claim and completion.
        ['pending', 'claimed', 'pending', 'claimed', 'delivered'].map((outcome) => ({
          scope: SCOPE,
          outcome,
        })),
      );
    });
  });
}
