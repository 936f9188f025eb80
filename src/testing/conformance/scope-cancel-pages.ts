/**
 * An operator's cancel of a scope holding more pending intents than one page cancels
 * (core/plan/plan-scope-cancel.ts): the fence step at once, then the intents in bounded pages, on
 * every store, whatever one transaction of it holds. The answer comes once every page is done.
 */
import { expect, it } from 'vitest';
import { CANCEL_INTENTS_PAGE } from '../../core/cancel-intents-page.js';
import type { IntentRequest } from '../../types.js';
import { LONG_TTL, acquire, auditAfter, expectRejected, lastSeq } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SCOPE = 'wf-cancel/memory';
/** More than two pages, so a page in the middle has one on both sides. */
const COMMITTED = 130;
const PER_COMMIT = 13;
/** Taken by a dispatcher before the cancel: one delivered, one still claimed. */
const DELIVERED = 'stop-011';
const CLAIMED = 'stop-088';

function intent(effectKey: string): IntentRequest {
  const target = effectKey === DELIVERED || effectKey === CLAIMED ? 'mail' : 'crm';
  return { effectKey, target, payload: { effectKey } };
}

async function commitAll(gate: ConformanceGate, fence: number, keys: string[]): Promise<void> {
  const commits = [];
  for (let start = 0; start < keys.length; start += PER_COMMIT) {
    commits.push({
      scope: SCOPE,
      fence,
      operationId: `op-stop-${fence}-${start}`,
      intents: keys.slice(start, start + PER_COMMIT).map(intent),
    });
  }
  for (const item of await gate.commitMany(commits)) {
    expect(item.ok && item.result.outcome).toBe('committed');
  }
}

export function scopeCancelPageCases(fx: SubjectFixture): void {
  it("an operator's cancel of a scope with ~130 pending intents: the fence moves at once, every pending intent of every older fence is cancelled once and audited, in bounded pages; a delivered or claimed intent is not cancelled nor counted", async () => {
    const { gate } = fx.subject;
    const older = await acquire(gate, SCOPE, 'run-0');
    await commitAll(gate, older.fence, ['stop-older']);
    const current = await gate.takeover(SCOPE, { holder: 'run-1', ttlMs: LONG_TTL });
    const keys = Array.from({ length: COMMITTED }, (_, i) => `stop-${String(i).padStart(3, '0')}`);
    await commitAll(gate, current.fence, keys);
    const taken = await gate.claimIntents({
      dispatcher: 'd1',
      ttlMs: LONG_TTL,
      limit: 10,
      targets: ['mail'],
    });
    expect(taken.map((claimed) => claimed.effectKey).sort()).toEqual([DELIVERED, CLAIMED]);
    await gate.completeIntent(DELIVERED, {
      claimFence: taken.find((claimed) => claimed.effectKey === DELIVERED)!.claimFence,
      outcome: 'delivered',
    });
    const seq = await lastSeq(gate);

    const pending = ['stop-older', ...keys].filter((key) => key !== DELIVERED && key !== CLAIMED);
    expect(pending.length).toBeGreaterThan(2 * CANCEL_INTENTS_PAGE);
    const cancelled = await gate.cancel(SCOPE, { reason: 'runaway' });
    expect(cancelled).toEqual({ fence: current.fence + 1, cancelledIntents: pending.length });
    expect(await gate.getScope(SCOPE)).toMatchObject({ fence: current.fence + 1, holder: null });

    const entries = await auditAfter(gate, seq);
    expect(entries.filter((entry) => entry.kind === 'cancel')).toMatchObject([
      { scope: SCOPE, outcome: 'ok', reason: 'runaway', currentFence: current.fence + 1 },
    ]);
    // The fence step comes first: every cancellation is audited after it, under its fence.
    expect(entries[0]).toMatchObject({ kind: 'cancel' });
    const cancellations = entries.filter(
      (entry) => entry.kind === 'intent' && entry.outcome === 'cancelled',
    );
    expect(cancellations.map((entry) => entry.effectKey).sort()).toEqual([...pending].sort());
    for (const entry of cancellations) expect(entry.currentFence).toBe(current.fence + 1);
    const statuses = await Promise.all(
      ['stop-older', 'stop-000', 'stop-129', DELIVERED, CLAIMED].map(
        async (key) => (await gate.getIntent(key))?.status,
      ),
    );
    expect(statuses).toEqual(['cancelled', 'cancelled', 'cancelled', 'delivered', 'claimed']);

    // The run it stopped commits nothing more.
    expectRejected(
      await gate.commit({
        scope: SCOPE,
        fence: current.fence,
        operationId: 'op-stop-after',
        intents: [intent('stop-after')],
      }),
      'stale_fence',
    );
    // A run that acquires afterwards commits intents the cancel never touches.
    const next = await acquire(gate, SCOPE, 'run-2');
    await commitAll(gate, next.fence, ['stop-next']);
    expect((await gate.getIntent('stop-next'))?.status).toBe('pending');
  });
}
