/**
 * An operator's cancel of a scope holding more pending intents than one page cancels
 * (core/plan/plan-scope-cancel.ts): the fence step at once, then the intents in bounded pages, on
 * every store, whatever one transaction of it holds. The answer comes once every page is done.
 */
import { expect, it } from 'vitest';
import { CANCEL_INTENTS_PAGE } from '../../core/cancel-intents-page.js';
import { LONG_TTL, acquire, auditAfter, expectRejected, lastSeq } from './helpers.js';
import {
  commitIntents,
  deliverOneClaimOne,
  intentKeys,
  intentOf,
  type ManyIntents,
} from './many-intents.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SETUP: ManyIntents = {
  scope: 'wf-cancel/memory',
  delivered: 'stop-011',
  claimed: 'stop-088',
};
const { scope: SCOPE, delivered: DELIVERED, claimed: CLAIMED } = SETUP;

async function commitAll(gate: ConformanceGate, fence: number, keys: string[]): Promise<void> {
  await commitIntents(gate, SETUP, fence, keys);
}

export function scopeCancelPageCases(fx: SubjectFixture): void {
  it("an operator's cancel of a scope with ~130 pending intents: the fence moves at once, every pending intent of every older fence is cancelled once and audited, in bounded pages; a delivered or claimed intent is not cancelled nor counted", async () => {
    const { gate } = fx.subject;
    const older = await acquire(gate, SCOPE, 'run-0');
    await commitAll(gate, older.fence, ['stop-older']);
    const current = await gate.takeover(SCOPE, { holder: 'run-1', ttlMs: LONG_TTL });
    const keys = intentKeys('stop');
    await commitAll(gate, current.fence, keys);
    await deliverOneClaimOne(gate, SETUP);
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
        intents: [intentOf(SETUP, 'stop-after')],
      }),
      'stale_fence',
    );
    // A run that acquires afterwards commits intents the cancel never touches.
    const next = await acquire(gate, SCOPE, 'run-2');
    await commitAll(gate, next.fence, ['stop-next']);
    expect((await gate.getIntent('stop-next'))?.status).toBe('pending');
  });
}
