/**
 * What a rollback's pages of intents read of the rollback's list: the moved scopes after the last
 * one a page finished, as a page of the list, never the whole list. A rollback over 100,000
 * scopes runs thousands of such pages; reading the list on each cost n² reads.
 */
import { describe, expect, it } from 'vitest';
import { planRollbackIntentsPage } from '../../src/core/plan/plan-rollback-intents.js';
import type { CutoverRow, Put } from '../../src/core/plan/transition.js';
import type { CutoverCursorRow } from '../../src/core/rollout-rows.js';
import { cutoverCursorRef } from '../../src/core/rollout-rows.js';
import { MapSnapshot } from './map-snapshot.js';
import { unreadListCutover } from './unread-list-cutover.js';

const CUTOVER = 'r1/rollback';
const LISTED = 2_000;
const name = (i: number) => `wf-${String(i).padStart(5, '0')}`;

function rollbackSnapshot(): { snapshot: MapSnapshot; cutover: CutoverRow } {
  const snapshot = new MapSnapshot();
  const cutover = unreadListCutover(CUTOVER, LISTED);
  const names = Array.from({ length: LISTED }, (_, i) => name(i));
  snapshot.ranges.set(JSON.stringify({ type: 'cutoverScopes', cutoverId: CUTOVER }), names);
  for (const scope of names) {
    snapshot.set({ type: 'cutoverStep', cutoverId: CUTOVER, scope }, { fence: 5 });
  }
  return { snapshot, cutover };
}

/** The intents cursor a page's transition stores. */
function storedIntents(puts: readonly Put[]) {
  const cursor = puts.find((put) => put.type === 'rollout')?.row as CutoverCursorRow | undefined;
  return cursor?.intents;
}

describe("a rollback's pages of intents", () => {
  it('read the moved scopes after the last one finished, as a page of the list', () => {
    const { snapshot, cutover } = rollbackSnapshot();
    // 1,000 scopes moved; nothing to cancel on any of them.
    const visited: string[] = [];
    const page = (from: { next: number; after: string | null; scope?: string }) =>
      planRollbackIntentsPage(snapshot, {
        cutover,
        intents: {
          reason: CUTOVER,
          fencesOf: (scope) => {
            visited.push(scope);
            return { fences: null, expect: [] };
          },
        },
        moved: 1_000,
        listAfter: name(999),
        from,
        chunk: 1_000,
        bounds: {},
        expect: [cutoverCursorRef(CUTOVER)],
      });
    const first = page({ next: 0, after: null });
    const cursor = storedIntents(first.put);
    expect(cursor?.next).toBe(visited.length);
    expect(visited[0]).toBe(name(0));
    const seen = visited.length;
    const second = page(cursor!);
    expect(visited[seen]).toBe(name(seen));
    expect(storedIntents(second.put)?.next).toBe(visited.length);
    // Every page reads its names as a page of the list, bounded by the scopes moved.
    const pages = snapshot.listed.filter((range) => range.type === 'page');
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const range of pages)
      if (range.type === 'page') expect(range.limit).toBeLessThanOrEqual(1_000);
  });
});
