/**
 * A rollout step lists its scopes first and moves them afterwards, chunk by chunk, each in a
 * transaction of its own: a scope can be deleted after the listing named it and before its chunk
 * runs. The step must leave it, skipped (docs/rollout.md: "A listed scope that is deleted, or that
 * left `fromPolicy` before its chunk ran, is skipped"): a move would bring a deleted scope back to
 * life on toPolicy with a fence and a rollout mark. Here one scope is deleted while the list is
 * still being built, after the page that listed it, and another once the list is complete and the
 * first chunk has moved, before the chunk that holds it. The chunks are small (the stores are
 * opened with small cutover chunks), so the step takes several pages and several chunks.
 */
import { describe, expect, it } from 'vitest';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import type { Store } from '../../src/store/store.js';
import type { CutoverRecord, StartRolloutRequest } from '../../src/types.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { HOUR, readAudit, registerPolicies } from '../cutover/cutover-helpers.js';

const TENANT = 'default';
/** The names a listing page examines and the scopes a chunk moves: the stores are opened with it. */
const PAGE = 10;
const START: StartRolloutRequest & { rolloutId: string } = {
  rolloutId: 'r-deleted',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [50, 100],
};
const STEP = `${START.rolloutId}/step-1`;

/** The first name `base-<n>` that the hash admits at 50 %. */
function admittedName(base: string): string {
  for (let n = 0; ; n += 1) {
    const name = `${base}-${n}`;
    if (admits(START.rolloutId, name, 50)) return name;
  }
}

async function cutoverOf(store: Store): Promise<CutoverRecord> {
  const cutover = await store.getCutover(TENANT, STEP);
  if (cutover === null) throw new Error(`no cutover ${STEP}`);
  return cutover;
}

describe.each(AREA_STORES)('a scope deleted between its listing and its chunk on $name', (kind) => {
  const stores = storesFor(kind, 'deleted_listed');

  it('the step skips it and reports it skipped, creates nothing for it, and moves every other listed scope once', async () => {
    const { store } = await stores.open({ clock: new ManualClock(), cutoverChunk: PAGE });
    const gate = await Fencegate.open({ store });
    try {
      await registerPolicies(gate);
      // First in name order, so the first page of the listing examines it; the hash admits it.
      const early = admittedName('wf-0000/a');
      const names = [
        early,
        ...Array.from(
          { length: 4 * PAGE + 5 },
          (_, i) => `wf-${String(i).padStart(4, '0')}/memory`,
        ),
      ].sort();
      expect(names[0]).toBe(early);
      const admitted = names.filter((name) => admits(START.rolloutId, name, 50));
      // The last one the listing lists: the last chunk moves it.
      const late = admitted.at(-1)!;
      // Enough on each side of the hash that what moved and what stayed both say something.
      expect(admitted.length).toBeGreaterThanOrEqual(2 * PAGE);
      expect(names.length - admitted.length).toBeGreaterThan(PAGE);
      for (const scope of names) {
        const grant = await gate.acquire({
          scope,
          holder: 'v7-w',
          ttlMs: HOUR,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'v7-w', fence: grant.fence });
      }

      // The start lists nothing; each chunk sent then lists one page, until the list is complete.
      await store.changeRollout(TENANT, { action: 'start', request: START });
      let pages = 0;
      for (;;) {
        expect(await store.moveCutoverChunk(TENANT, STEP)).toBeGreaterThan(0);
        const cutover = await cutoverOf(store);
        const handled = cutover.fences.length + cutover.skipped.length;
        if (handled === 0) {
          pages += 1;
          // The first page examined `early` and listed it: it is deleted before any chunk moves.
          if (pages === 1) {
            expect(cutover.planned).toBeGreaterThan(0);
            expect((await gate.deleteScope(early)).fence).toBe(2);
          }
          continue;
        }
        // The list is complete and the first chunk has moved; `late` waits for a later chunk.
        expect(pages).toBeGreaterThanOrEqual(2);
        expect(cutover.planned).toBe(admitted.length);
        expect(handled).toBeLessThan(cutover.planned);
        expect(cutover.fences.map((f) => f.scope)).not.toContain(late);
        expect((await gate.deleteScope(late)).fence).toBe(2);
        break;
      }
      // Sent again, the start moves the rest of the step.
      expect(await gate.rollouts.start(START)).toMatchObject({
        status: 'running',
        step: 1,
        cutoverDone: true,
      });

      const deleted = [early, late].sort();
      const moved = admitted.filter((name) => !deleted.includes(name));
      const cutover = await cutoverOf(store);
      expect(cutover.status).toBe('completed');
      expect([...cutover.skipped].sort()).toEqual(deleted);
      expect(cutover.fences.map((f) => f.scope).sort()).toEqual(moved);
      expect(cutover.planned).toBe(admitted.length);
      expect((await gate.cutoverReport(STEP))?.skipped.sort()).toEqual(deleted);
      const report = await gate.rollouts.report(START.rolloutId);
      expect(report?.steps.map(({ moved: n, skipped }) => ({ moved: n, skipped }))).toEqual([
        { moved: moved.length, skipped: 2 },
      ]);

      // Each other listed scope moved once: one cutover entry, fence 2, released, on v8.
      const moves = new Map<string, number>();
      for (const entry of await readAudit(gate, { kind: 'cutover' })) {
        if (entry.reason !== STEP || entry.scope === null) continue;
        moves.set(entry.scope, (moves.get(entry.scope) ?? 0) + 1);
      }
      expect([...moves.keys()].sort()).toEqual(moved);
      expect([...moves.values()].every((n) => n === 1)).toBe(true);
      for (const scope of names) {
        const state = await gate.getScope(scope);
        const expected = deleted.includes(scope)
          ? // Deleted and left so: the fence its delete gave, no holder, nothing of v8.
            { fence: 2, holder: null, policyVersion: 'v7', status: 'deleted' }
          : moved.includes(scope)
            ? { fence: 2, holder: null, policyVersion: 'v8', status: 'active' }
            : { fence: 1, holder: null, policyVersion: 'v7', status: 'active' };
        expect({ scope, ...state }).toMatchObject({ scope, ...expected });
      }
      // The rollout marks only the scopes it moved: its rollback will not touch the deleted ones.
      const marks = await store.readRolloutScopes(TENANT, START.rolloutId);
      expect(marks.map(({ scope }) => scope).sort()).toEqual(moved);

      const verified = await gate.verify();
      expect(verified.violations).toEqual([]);
      expect(verified.ok).toBe(true);
    } finally {
      await gate.close();
    }
  }, 60_000);
});
