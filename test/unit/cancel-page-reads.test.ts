/**
 * What one page of a cancel reads (core/cancel-intents-page.ts): the scope's intents after its
 * cursor, as far as the page can use, never the scope's whole range again. Counted as the names
 * the plan listed and the intents it read, on a scope of 500 intents.
 */
import { describe, expect, it } from 'vitest';
import { CANCEL_INTENTS_PAGE, CANCEL_PAGE_LOOK } from '../../src/core/cancel-intents-page.js';
import { planCancelIntents } from '../../src/core/plan/plan-leases.js';
import { planCancel, planCancelPage } from '../../src/core/plan/plan-scope-cancel.js';
import { intentRow } from './intent-row.js';
import { MapSnapshot } from './map-snapshot.js';

const SCOPE = 'wf-1';
const COUNT = 500;

/** wf-1 held at fence 9 by w1; intent i (k000…k499) committed under `fenceOf(i)`. */
function scopeWith(fenceOf: (i: number) => number): MapSnapshot {
  const snapshot = new MapSnapshot();
  snapshot.set(
    { type: 'scope', scope: SCOPE },
    {
      fence: 9,
      holder: 'w1',
      leaseExpiresAt: 5_000,
      policyVersion: null,
      status: 'active',
      updatedAt: 0,
    },
  );
  const keys = Array.from({ length: COUNT }, (_, i) => `k${String(i).padStart(3, '0')}`);
  snapshot.ranges.set(JSON.stringify({ type: 'scopeIntents', scope: SCOPE }), keys);
  keys.forEach((key, i) =>
    snapshot.set({ type: 'intent', effectKey: key }, intentRow(key, fenceOf(i))),
  );
  return snapshot;
}

/** The names the plan listed and the intents it read since `mark`. */
function readsSince(snapshot: MapSnapshot, mark: { listed: number; reads: number }) {
  const names = snapshot.listed.slice(mark.listed).reduce((sum, range) => {
    return sum + snapshot.list(range).length;
  }, 0);
  const intents = snapshot.reads.slice(mark.reads).filter((ref) => ref.type === 'intent').length;
  return { names, intents };
}

function markOf(snapshot: MapSnapshot) {
  return { listed: snapshot.listed.length, reads: snapshot.reads.length };
}

function valueOf<A>(transition: {
  answer: { ok: true; value: A } | { ok: false; error: Error };
}): A {
  if (!transition.answer.ok) throw transition.answer.error;
  return transition.answer.value;
}

describe('a page of a cancel reads from its cursor on', () => {
  it("an operator's later page reads about a page of the scope's 500 intents, not all of them", () => {
    const snapshot = scopeWith(() => 3);
    const first = valueOf(planCancel(snapshot, SCOPE, 'stop'));
    expect(first.cancelledIntents).toBe(CANCEL_INTENTS_PAGE);
    const mark = markOf(snapshot);
    const second = valueOf(planCancelPage(snapshot, SCOPE, first.fence, first.nextCursor!));
    expect(second.cancelledIntents).toBe(CANCEL_INTENTS_PAGE);
    const { names, intents } = readsSince(snapshot, mark);
    expect(names).toBeLessThanOrEqual(CANCEL_INTENTS_PAGE + 1);
    expect(intents).toBeLessThanOrEqual(CANCEL_INTENTS_PAGE + 1);
  });

  it("the holder's page passes over a bounded number of older runs' intents, then ends with a cursor", () => {
    // k000…k449 under fence 2 (older than committedFrom), k450…k499 under fence 5.
    const snapshot = scopeWith((i) => (i < 450 ? 2 : 5));
    const request = { scope: SCOPE, holder: 'w1', fence: 9, committedFrom: 5 };
    const mark = markOf(snapshot);
    const first = valueOf(planCancelIntents(snapshot, request));
    const { names, intents } = readsSince(snapshot, mark);
    expect(first.cancelled).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    expect(intents).toBeLessThanOrEqual(CANCEL_PAGE_LOOK + CANCEL_INTENTS_PAGE + 1);
    expect(names).toBeLessThanOrEqual(CANCEL_PAGE_LOOK + 2 * (CANCEL_INTENTS_PAGE + 1));
    // Followed to the end, the pages cancel exactly the range's intents, each once.
    const cancelled: string[] = [];
    let cursor: string | null = first.nextCursor;
    while (cursor !== null) {
      const page = valueOf(planCancelIntents(snapshot, { ...request, cursor }));
      cancelled.push(...page.cancelled);
      cursor = page.nextCursor;
    }
    expect(cancelled).toEqual(Array.from({ length: 50 }, (_, i) => `k${450 + i}`));
  });
});
