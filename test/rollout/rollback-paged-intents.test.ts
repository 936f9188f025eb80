/**
 * A rollout's rollback with cancelIntents over a list built in pages: the chunks read their names
 * as a page of the list (after the cursor's last name), the pages of intent cancellations visit
 * the moved scopes by their position in the list. Both must name the same scopes in the same
 * order, so every pending toPolicy intent of every moved scope is cancelled once, whatever the
 * page boundaries, and a rollback interrupted between two calls resumes from another handle.
 */
import { describe, expect, it } from 'vitest';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import type { Store } from '../../src/store/store.js';
import type { StartRolloutRequest } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { HOUR, readAudit, registerPolicies } from '../cutover/cutover-helpers.js';

const TENANT = 'default';
const PAGE = 5;
const SCOPES = 6 * PAGE + 3;
const START: StartRolloutRequest & { rolloutId: string } = {
  rolloutId: 'r-back',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [60, 100],
};
const ROLLBACK = `${START.rolloutId}/rollback`;

function scopeName(i: number): string {
  return `wf-${String(i).padStart(4, '0')}`;
}

/** How many v8 intents scope i holds: most a few, one more than a cancel page. */
function intentsOf(i: number): number {
  return i === 7 ? 61 : i % 3;
}

describe.each(AREA_STORES)('a rollback with cancelIntents over a paged list on $name', (kind) => {
  const stores = storesFor(kind, 'rollback_paged_intents');

  it('cancels every pending v8 intent of every moved scope once, the rollback resumed from another handle', async () => {
    const opened = await stores.open({ cutoverChunk: PAGE });
    let store: Store = opened.store;
    let gate = await Fencegate.open({ store });
    try {
      await registerPolicies(gate);
      const names = Array.from({ length: SCOPES }, (_, i) => scopeName(i));
      for (const scope of names) {
        const g = await gate.acquire({ scope, holder: 'v7-w', ttlMs: HOUR, policyVersion: 'v7' });
        await gate.commit({
          scope,
          fence: g.fence,
          operationId: `v7-${scope}`,
          intents: scope === names[0] ? [{ effectKey: 'v7-mail', target: 'crm', payload: {} }] : [],
          release: true,
        });
      }
      const started = await gate.rollouts.start(START);
      expect(started).toMatchObject({ percent: 60, cutoverDone: true });
      const moved = names.filter((scope) => admits(START.rolloutId, scope, 60));
      expect(moved.length).toBeGreaterThan(3 * PAGE);
      const v8Keys: string[] = [];
      for (const [i, scope] of moved.entries()) {
        const g = await gate.acquire({ scope, holder: 'v8-w', ttlMs: HOUR, policyVersion: 'v8' });
        const keys = Array.from({ length: intentsOf(i) }, (_, n) => `${scope}/v8-${n}`);
        for (let at = 0; at < keys.length; at += 16) {
          const result = await gate.commit({
            scope,
            fence: g.fence,
            operationId: `v8-${scope}-${at}`,
            intents: keys.slice(at, at + 16).map((effectKey) => ({
              effectKey,
              target: 'crm',
              payload: {},
            })),
          });
          expect(result.outcome).toBe('committed');
        }
        v8Keys.push(...keys);
      }

      await store.changeRollout(TENANT, {
        action: 'rollback',
        rolloutId: START.rolloutId,
        cancelIntents: true,
      });
      // The list, a few chunks and a few pages of intents; then the handle goes away.
      for (let n = 0; n < 12; n += 1) await store.moveCutoverChunk(TENANT, ROLLBACK);
      await gate.close();
      store = await stores.reopen(opened.url, { cutoverChunk: PAGE });
      gate = await Fencegate.open({ store });
      const rolledBack = await gate.rollouts.rollback({
        rolloutId: START.rolloutId,
        cancelIntents: true,
      });
      expect(rolledBack.status).toBe('rolled_back');

      const statuses = new Map<string, string>();
      for (const scope of names) {
        const { items } = await gate.listIntents({ scope, limit: 1000 });
        for (const intent of items) statuses.set(intent.effectKey, intent.status);
      }
      const notCancelled = v8Keys.filter((key) => statuses.get(key) !== 'cancelled');
      expect(notCancelled).toEqual([]);
      expect(statuses.get('v7-mail')).toBe('pending');
      const report = await gate.rollouts.report(START.rolloutId);
      expect(report?.rollback?.intentsCancelled).toBe(v8Keys.length);
      const back = new Map<string, number>();
      for (const entry of await readAudit(gate, { kind: 'cutover' })) {
        if (entry.reason !== ROLLBACK || entry.scope === null) continue;
        back.set(entry.scope, (back.get(entry.scope) ?? 0) + 1);
      }
      expect([...back.keys()].sort()).toEqual(moved);
      expect([...back.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await gate.close();
    }
  }, 60_000);
});
