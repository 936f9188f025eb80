/**
 * An operator's cancel page by page over an in-memory snapshot (core/plan/plan-scope-cancel.ts):
 * the fence step with the first page, then pages under that fence; an intent a dispatcher claimed
 * between two pages is not cancelled nor counted, and a page sent again changes nothing more.
 */
import { describe, expect, it } from 'vitest';
import { planCancel, planCancelPage } from '../../src/core/plan/plan-scope-cancel.js';
import type { Transition } from '../../src/core/plan/transition.js';
import { intentRow } from './intent-row.js';
import { MapSnapshot } from './map-snapshot.js';

const SCOPE = 'wf-1';

/** wf-1 held at fence 3, with p0 committed under fence 2 and p1…p5 under fence 3. */
function scopeWithIntents(): MapSnapshot {
  const snapshot = new MapSnapshot();
  snapshot.set(
    { type: 'scope', scope: SCOPE },
    {
      fence: 3,
      holder: 'w1',
      leaseExpiresAt: 5_000,
      policyVersion: null,
      status: 'active',
      updatedAt: 0,
    },
  );
  const keys = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
  snapshot.ranges.set(JSON.stringify({ type: 'scopeIntents', scope: SCOPE }), keys);
  for (const key of keys) {
    snapshot.set({ type: 'intent', effectKey: key }, intentRow(key, key === 'p0' ? 2 : 3));
  }
  return snapshot;
}

function cancelledBy(transition: Transition<unknown>): string[] {
  return transition.put.flatMap((put) => (put.type === 'intent' ? [put.effectKey] : []));
}

describe("an operator's cancel in pages", () => {
  it('the fence step carries the first page; later pages cancel under its fence; an intent claimed between pages is left', () => {
    const snapshot = scopeWithIntents();
    const bounds = { maxCancels: 2 };
    const first = planCancel(snapshot, SCOPE, 'stop', undefined, bounds);
    expect(first.put[0]).toMatchObject({
      type: 'scope',
      row: { fence: 4, holder: null, leaseExpiresAt: null },
    });
    expect(cancelledBy(first)).toEqual(['p0', 'p1']);
    expect(first.audit.map((entry) => [entry.kind, entry.outcome, entry.currentFence])).toEqual([
      ['cancel', 'ok', 4],
      ['intent', 'cancelled', 4],
      ['intent', 'cancelled', 4],
    ]);
    if (!first.answer.ok) throw first.answer.error;
    expect(first.answer.value).toMatchObject({ fence: 4, cancelledIntents: 2 });
    expect(first.answer.value.nextCursor).not.toBeNull();
    snapshot.apply(first.put);

    // A dispatcher claims p3 before the next page.
    snapshot.set({ type: 'intent', effectKey: 'p3' }, intentRow('p3', 3, { status: 'claimed' }));
    const second = planCancelPage(snapshot, SCOPE, 4, first.answer.value.nextCursor!, bounds);
    expect(cancelledBy(second)).toEqual(['p2']);
    expect(second.expect).toContainEqual({ type: 'intent', effectKey: 'p3' });
    if (!second.answer.ok) throw second.answer.error;
    expect(second.answer.value).toMatchObject({ fence: 4, cancelledIntents: 1 });
    snapshot.apply(second.put);

    const third = planCancelPage(snapshot, SCOPE, 4, second.answer.value.nextCursor!, bounds);
    expect(cancelledBy(third)).toEqual(['p4', 'p5']);
    expect(third.answer).toEqual({
      ok: true,
      value: { fence: 4, cancelledIntents: 2, nextCursor: null },
    });
    snapshot.apply(third.put);
    // The same page again, after a lost answer: nothing more to cancel.
    const again = planCancelPage(snapshot, SCOPE, 4, second.answer.value.nextCursor!, bounds);
    expect(again.put).toEqual([]);
    expect(again.audit).toEqual([]);
    expect(again.answer).toEqual({
      ok: true,
      value: { fence: 4, cancelledIntents: 0, nextCursor: null },
    });
  });

  it('a later page leaves the intents committed under the cancel fence or a newer one', () => {
    const snapshot = scopeWithIntents();
    // A run that acquired after the cancel (fence 5) committed p6.
    snapshot.ranges.set(JSON.stringify({ type: 'scopeIntents', scope: SCOPE }), ['p0', 'p1', 'p6']);
    snapshot.set({ type: 'intent', effectKey: 'p6' }, intentRow('p6', 5));
    const page = planCancelPage(snapshot, SCOPE, 4, undefined);
    expect(cancelledBy(page)).toEqual(['p0', 'p1']);
  });
});
