/**
 * Intents claimed by the commit that creates them (core/claim-at-commit.ts), for subjects that
 * hand over their Store: a dispatcher of the committing process offers room on that Store, and a
 * commit creates that many of its intents already claimed by it. Every dispatch rule holds as for
 * a claim: a claim that never reached its dispatcher lapses and is claimed again (reconciled),
 * cancel moves only pending intents, a replay claims nothing, and the store judges completions by
 * the claim fence.
 */
import { describe, expect, it } from 'vitest';
import { staleClaim } from '../../core/refusal-messages.js';
import { offerIntentTaker, type IntentTaker } from '../../store/intent-takers.js';
import type { CommitRequest, Intent } from '../../types.js';
import { acquire, auditAfter, expectCommitted, expectFailure, expectRejected } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'claim-at-commit/memory';
const TTL = 10_000;

/** A taker with `room` for target crm that keeps what it is handed (and delivers nothing). */
function recordingTaker(room: number) {
  const taken: Intent[][] = [];
  let held = 0;
  const taker: IntentTaker = {
    dispatcher: 'local-1',
    ttlMs: TTL,
    targets: new Set(['crm']),
    reserve(wanted) {
      const granted = Math.min(wanted, room - held);
      held += granted;
      return granted;
    },
    take(reserved, intents) {
      held -= reserved;
      taken.push(intents);
    },
  };
  return { taker, taken, held: () => held };
}

function request(fence: number, operationId: string, keys: [string, string][]): CommitRequest {
  return {
    scope: SCOPE,
    fence,
    operationId,
    intents: keys.map(([effectKey, target]) => ({ effectKey, target, payload: { effectKey } })),
  };
}

export function claimAtCommitCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('intents claimed by their commit', () => {
    it('creates as many intents claimed as the dispatcher has room for, of its targets; audits pending, then claimed', async () => {
      const { store, tenant } = fx.store;
      const { gate } = fx.subject;
      const { taker, taken, held } = recordingTaker(2);
      const withdraw = offerIntentTaker(store, tenant, taker);
      try {
        const grant = await acquire(gate, SCOPE, 'w1');
        const committed = expectCommitted(
          await gate.commit(
            request(grant.fence, 'op-1', [
              ['ac-mail', 'mail'],
              ['ac-1', 'crm'],
              ['ac-2', 'crm'],
              ['ac-3', 'crm'],
            ]),
          ),
        );
        expect(committed.intents).toEqual([
          { effectKey: 'ac-mail', status: 'pending' },
          { effectKey: 'ac-1', status: 'claimed' },
          { effectKey: 'ac-2', status: 'claimed' },
          { effectKey: 'ac-3', status: 'pending' },
        ]);
        expect(held()).toBe(0);
        expect(taken.map((intents) => intents.map((intent) => intent.effectKey))).toEqual([
          ['ac-1', 'ac-2'],
        ]);
        const stored = await gate.getIntent('ac-1');
        expect(stored).toMatchObject({
          status: 'claimed',
          claimFence: 1,
          attempts: 1,
          claimedBy: 'local-1',
          payload: { effectKey: 'ac-1' },
        });
        expect(stored!.claimExpiresAt).toBe(stored!.createdAt + TTL);
        // What the dispatcher was handed is the stored intent, but for the host's times.
        const {
          createdAt: _c,
          updatedAt: _u,
          claimExpiresAt: _e,
          nextAttemptAt: _n,
          ...handed
        } = taken[0]![0]!;
        expect(stored).toMatchObject(handed);
        // A claim takes only what the commit left pending.
        const claimed = await gate.claimIntents({ dispatcher: 'd2', ttlMs: TTL, limit: 10 });
        expect(claimed.map((intent) => intent.effectKey).sort()).toEqual(['ac-3', 'ac-mail']);

        const transitions = (await auditAfter(gate))
          .filter((entry) => entry.kind === 'intent' && entry.effectKey === 'ac-1')
          .map(({ outcome, reason, holder, fence }) => ({ outcome, reason, holder, fence }));
        expect(transitions).toEqual([
          { outcome: 'pending', reason: null, holder: null, fence: null },
          { outcome: 'claimed', reason: 'at_commit', holder: 'local-1', fence: 1 },
        ]);
        const done = await gate.completeIntent('ac-1', { claimFence: 1, outcome: 'delivered' });
        expect(done.status).toBe('delivered');
      } finally {
        withdraw();
      }
    });

    it('a claim that never reached its dispatcher lapses and is claimed again; the first claim is stale_claim', async () => {
      const { store, tenant } = fx.store;
      const { gate } = fx.subject;
      const { taker } = recordingTaker(1);
      const withdraw = offerIntentTaker(store, tenant, taker);
      try {
        const grant = await acquire(gate, SCOPE, 'w1');
        expectCommitted(await gate.commit(request(grant.fence, 'op-1', [['lost-1', 'crm']])));
      } finally {
        withdraw();
      }
      expect(await gate.claimIntents({ dispatcher: 'd2', ttlMs: TTL, limit: 10 })).toEqual([]);
      await fx.subject.advanceClock(TTL);
      const [again] = await gate.claimIntents({ dispatcher: 'd2', ttlMs: TTL, limit: 10 });
      // attempts 2: the next dispatcher reconciles before it delivers again.
      expect(again).toMatchObject({ effectKey: 'lost-1', claimFence: 2, attempts: 2 });
      await expectFailure(
        gate.completeIntent('lost-1', { claimFence: 1, outcome: 'delivered' }),
        staleClaim('lost-1', 1, 2, 'claimed'),
      );
      const unknown = await gate.completeIntent('lost-1', {
        claimFence: 2,
        outcome: 'unknown',
        retryAfterMs: 0,
      });
      expect(unknown).toMatchObject({ status: 'unknown', unknownOutcomes: 1 });
      const [reconcile] = await gate.claimIntents({ dispatcher: 'd2', ttlMs: TTL, limit: 10 });
      expect(reconcile).toMatchObject({ effectKey: 'lost-1', claimFence: 3, attempts: 3 });
    });

    it('cancel leaves an intent claimed by its commit to its dispatcher; after cancel a commit claims nothing', async () => {
      const { store, tenant } = fx.store;
      const { gate } = fx.subject;
      const { taker, taken, held } = recordingTaker(1);
      const withdraw = offerIntentTaker(store, tenant, taker);
      try {
        const grant = await acquire(gate, SCOPE, 'w1');
        expectCommitted(
          await gate.commit(
            request(grant.fence, 'op-1', [
              ['cc-1', 'crm'],
              ['cc-2', 'crm'],
            ]),
          ),
        );
        expect(await gate.cancel(SCOPE, { reason: 'stop' })).toMatchObject({
          cancelledIntents: 1,
        });
        expect(await gate.getIntent('cc-2')).toMatchObject({ status: 'cancelled' });
        expect(await gate.getIntent('cc-1')).toMatchObject({ status: 'claimed' });
        const delivered = await gate.completeIntent('cc-1', {
          claimFence: 1,
          outcome: 'delivered',
        });
        expect(delivered.status).toBe('delivered');

        // The worker's commit after the cancel is stale: no intent exists, the room is freed.
        expectRejected(
          await gate.commit(request(grant.fence, 'op-2', [['cc-3', 'crm']])),
          'stale_fence',
        );
        expect(await gate.getIntent('cc-3')).toBeNull();
        expect(held()).toBe(0);
        expect(taken.map((intents) => intents.length)).toEqual([1, 0]);
      } finally {
        withdraw();
      }
    });

    it('a replayed commit hands nothing over and answers as the first did', async () => {
      const { store, tenant } = fx.store;
      const { gate } = fx.subject;
      const grant = await acquire(gate, SCOPE, 'w1');
      const first = request(grant.fence, 'op-1', [['rp-1', 'crm']]);
      const { taker, taken, held } = recordingTaker(4);
      const withdraw = offerIntentTaker(store, tenant, taker);
      try {
        const answer = expectCommitted(await gate.commit(first));
        const replay = expectCommitted(await gate.commit(first));
        expect(replay).toEqual({ ...answer, replayed: true });
        expect(taken.map((intents) => intents.length)).toEqual([1, 0]);
        expect(held()).toBe(0);
      } finally {
        withdraw();
      }
      // Without a dispatcher offering room, the same request is still a replay.
      expect(expectCommitted(await gate.commit(first)).replayed).toBe(true);
    });
  });
}
