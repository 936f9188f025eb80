/**
 * Which rollouts /metrics shows when there are more than it shows: the cap is shared fairly, so a
 * tenant with many rollouts cannot push another tenant's off the scrape.
 */
import { describe, expect, it } from 'vitest';
import type { RolloutRow } from '../../src/core/rollout-rows.js';
import { fairShare, type TenantRollout } from '../../src/rollout/rollout-gauges.js';

function rollouts(tenant: string, count: number, newest: number): TenantRollout[] {
  return Array.from({ length: count }, (_, i) => ({
    tenant,
    rollout: { rolloutId: `${tenant}-${i}`, updatedAt: newest - i } as RolloutRow,
  }));
}

const ids = (shown: TenantRollout[]) => shown.map((entry) => entry.rollout.rolloutId);

describe('the rollouts /metrics shows', () => {
  it('a tenant with many newer rollouts leaves the others theirs', () => {
    const busy = rollouts('busy', 200, 10_000);
    const quiet = rollouts('quiet', 2, 100);
    const shown = fairShare([...busy, ...quiet], 10);
    expect(shown).toHaveLength(10);
    expect(ids(shown)).toEqual(expect.arrayContaining(['quiet-0', 'quiet-1']));
    expect(shown.filter((entry) => entry.tenant === 'busy')).toHaveLength(8);
    // Each tenant's most recently changed first.
    expect(ids(shown.filter((entry) => entry.tenant === 'busy'))).toEqual(ids(busy.slice(0, 8)));
  });

  it('more tenants than places: one each, the most recently changed tenants first', () => {
    const many = Array.from({ length: 6 }, (_, t) => rollouts(`t${t}`, 3, 1_000 + t)).flat();
    expect(ids(fairShare(many, 4))).toEqual(['t5-0', 't4-0', 't3-0', 't2-0']);
  });

  it('under the cap, every rollout', () => {
    const all = [...rollouts('a', 3, 50), ...rollouts('b', 1, 70)];
    expect(fairShare(all, 100)).toHaveLength(4);
  });
});
