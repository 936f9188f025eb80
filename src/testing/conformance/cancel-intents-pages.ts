/**
 * cancelIntents page by page (core/cancel-intents-page.ts): a superseded run that committed more
 * intents than one page looks at has them cancelled in bounded pages that the caller follows by
 * `nextCursor`, on every store, whatever one transaction of it holds.
 */
import { expect, it } from 'vitest';
import { CANCEL_INTENTS_PAGE } from '../../core/cancel-intents-page.js';
import type { CancelIntentsResult } from '../../types.js';
import {
  LONG_TTL,
  acquire,
  auditAfter,
  expectCommitted,
  expectFailure,
  lastSeq,
} from './helpers.js';
import {
  MANY_INTENTS,
  commitIntents,
  deliverOneClaimOne,
  intentKeys,
  intentOf,
  type ManyIntents,
} from './many-intents.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

const SETUP: ManyIntents = { scope: 'wf-pages/memory', delivered: 'page-007', claimed: 'page-070' };
const { scope: SCOPE, delivered: DELIVERED, claimed: CLAIMED } = SETUP;

async function commitOne(gate: ConformanceGate, fence: number, effectKey: string): Promise<void> {
  expectCommitted(
    await gate.commit({
      scope: SCOPE,
      fence,
      operationId: `op-${effectKey}`,
      intents: [intentOf(SETUP, effectKey)],
    }),
  );
}

export function cancelIntentsPageCases(fx: SubjectFixture): void {
  it('cancelIntents pages: a superseded run of ~130 intents has each pending one cancelled exactly once in bounded pages; a page resent answers the same; a delivered or claimed intent is not cancelled', async () => {
    const { gate } = fx.subject;
    const older = await acquire(gate, SCOPE, 'run-0');
    await commitOne(gate, older.fence, 'page-older');
    const superseded = await gate.takeover(SCOPE, { holder: 'run-1', ttlMs: LONG_TTL });
    const keys = intentKeys('page');
    await commitIntents(gate, SETUP, superseded.fence, keys);
    await deliverOneClaimOne(gate, SETUP);
    const current = await gate.takeover(SCOPE, { holder: 'run-2', ttlMs: LONG_TTL });
    // The new run's own intent, its key among the range's: passed over by every page.
    await commitOne(gate, current.fence, 'page-064a');
    const seq = await lastSeq(gate);

    const request = {
      scope: SCOPE,
      holder: 'run-2',
      fence: current.fence,
      committedFrom: superseded.fence,
    };
    const pages: CancelIntentsResult[] = [];
    let cursor: string | undefined;
    do {
      const page = { ...request, ...(cursor === undefined ? {} : { cursor }) };
      const answer = await gate.cancelIntents(page);
      expect(answer.cancelled.length).toBeLessThanOrEqual(CANCEL_INTENTS_PAGE);
      // The same page again, as a client resends it after a lost reply: it changes nothing more
      // and answers the same.
      expect(await gate.cancelIntents(page)).toEqual(answer);
      pages.push(answer);
      cursor = answer.nextCursor ?? undefined;
      expect(pages.length).toBeLessThanOrEqual(MANY_INTENTS);
    } while (cursor !== undefined);

    const pending = keys.filter((key) => key !== DELIVERED && key !== CLAIMED);
    // In key order, each once: no page repeats another's intents or skips one.
    expect(pages.flatMap((page) => page.cancelled)).toEqual(pending);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(MANY_INTENTS / CANCEL_INTENTS_PAGE));
    const cancelledEntries = (await auditAfter(gate, seq)).filter(
      (entry) => entry.kind === 'intent' && entry.outcome === 'cancelled',
    );
    expect(cancelledEntries.map((entry) => entry.effectKey).sort()).toEqual(pending);
    const statuses = await Promise.all(
      [DELIVERED, CLAIMED, 'page-older', 'page-064a', 'page-129'].map(
        async (key) => (await gate.getIntent(key))?.status,
      ),
    );
    expect(statuses).toEqual(['delivered', 'claimed', 'pending', 'pending', 'cancelled']);
    // The loop over every page answers the same keys: all cancelled before, nothing more to do.
    expect(await gate.cancelAllIntents(request)).toEqual(pending);
    expect(await auditAfter(gate, seq)).toHaveLength(cancelledEntries.length);
    await expectFailure(
      gate.cancelIntents({ ...request, cursor: 'not a cursor' }),
      'invalid_request',
    );
  });
}
