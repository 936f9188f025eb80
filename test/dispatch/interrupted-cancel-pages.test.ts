/**
 * A cancel of many intents stopped between two of its transactions, as a server stopping there
 * leaves it: what was applied stands, the rest stays pending, and sending the command again
 * finishes it. An operator's cancel sent again is a new cancel (its fence step again) that cancels
 * what the first left; a rollback sent again resumes at its next page. Either way each intent is
 * cancelled once, and one a dispatcher claimed in between is left to its delivery and not counted.
 */
import { describe, expect, it } from 'vitest';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { PlanLimits, PlannedOperation, PlannedWrite } from '../../src/store/planned-store.js';

/** A store that stops, once armed, before the `at`-th write of an operation: it never happens. */
class StoppingStore extends MemoryStore {
  #stop: { operation: PlannedOperation; at: number } | null = null;

  arm(operation: PlannedOperation, at: number): void {
    this.#stop = { operation, at };
  }

  protected override apply<A>(write: PlannedWrite<A>): Promise<A> {
    if (this.#stop !== null && write.operation === this.#stop.operation) {
      this.#stop.at -= 1;
      if (this.#stop.at === 0) {
        this.#stop = null;
        return Promise.reject(new Error('the server stopped'));
      }
    }
    return super.apply(write);
  }

  /**
   * Rollback chunks of two scopes, so its moves and its pages of intents take turns; its list is
   * built in one page.
   */
  protected override planLimits(): PlanLimits {
    return { ...super.planLimits(), cutoverChunk: 2, listPage: 1000 };
  }
}

async function commitIntents(
  gate: Fencegate,
  scope: string,
  fence: number,
  keys: string[],
): Promise<void> {
  for (let start = 0; start < keys.length; start += 15) {
    const result = await gate.commit({
      scope,
      fence,
      operationId: `${scope}-${start}`,
      intents: keys.slice(start, start + 15).map((effectKey) => ({
        effectKey,
        target: 'crm',
        payload: {},
      })),
    });
    expect(result.outcome).toBe('committed');
  }
}

function keysOf(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
}

async function statusesOf(gate: Fencegate, keys: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const key of keys) {
    const status = (await gate.getIntent(key))?.status ?? 'missing';
    counts[status] = (counts[status] ?? 0) + 1;
  }
  return counts;
}

/** The effect keys of the tenant's audited cancellations, each as often as it was cancelled. */
async function cancellations(gate: Fencegate): Promise<string[]> {
  const page = await gate.audit({ kind: 'intent', limit: 1000 });
  return page.items.filter((e) => e.outcome === 'cancelled').map((e) => e.effectKey!);
}

describe('a cancel of many intents stopped between two transactions', () => {
  it("an operator's cancel stopped after its fence step: the rest stays pending; sent again, it cancels them under a new fence", async () => {
    const store = new StoppingStore();
    const gate = await Fencegate.open({ store });
    try {
      const grant = await gate.acquire({ scope: 'wf-1', holder: 'run-1', ttlMs: 60_000 });
      const keys = keysOf('stop', 120);
      await commitIntents(gate, 'wf-1', grant.fence, keys);
      store.arm('cancel', 2);
      await expect(gate.cancel('wf-1', { reason: 'runaway' })).rejects.toThrow(/stopped/);
      // The fence step stands, with the first page of 50.
      expect(await gate.getScope('wf-1')).toMatchObject({ fence: grant.fence + 1, holder: null });
      expect(await statusesOf(gate, keys)).toEqual({ cancelled: 50, pending: 70 });
      expect(
        await gate.commit({ scope: 'wf-1', fence: grant.fence, operationId: 'late' }),
      ).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });

      // A dispatcher claims a pending intent before the cancel is sent again.
      const [claimed] = await gate.claimIntents({ dispatcher: 'd1', ttlMs: 60_000, limit: 1 });
      expect(claimed?.status).toBe('claimed');
      expect(await gate.cancel('wf-1', { reason: 'runaway' })).toEqual({
        fence: grant.fence + 2,
        cancelledIntents: 69,
      });
      expect(await statusesOf(gate, keys)).toEqual({ cancelled: 119, claimed: 1 });
      expect((await gate.getIntent(claimed!.effectKey))?.status).toBe('claimed');
      const cancelled = await cancellations(gate);
      expect(cancelled).toHaveLength(119);
      expect(new Set(cancelled).size).toBe(119);
    } finally {
      await gate.close();
    }
  });

  it('a rollback with cancelIntents stopped between two pages has moved no scope past those whose intents are left; sent again, it resumes there', async () => {
    const store = new StoppingStore();
    const gate = await Fencegate.open({ store });
    try {
      await gate.registerPolicy({ version: 'v7' });
      await gate.registerPolicy({ version: 'v8' });
      const scopes = Array.from({ length: 12 }, (_, i) => `wf-${String(i).padStart(2, '0')}`);
      for (const scope of scopes) {
        const grant = await gate.acquire({
          scope,
          holder: 'v7',
          ttlMs: 60_000,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'v7', fence: grant.fence });
      }
      await gate.rollouts.start({
        rolloutId: 'r1',
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [50],
      });
      const ramped = scopes.filter((scope) => admits('r1', scope, 50));
      expect(ramped.length).toBeGreaterThanOrEqual(4);
      const keys: string[] = [];
      for (const [i, scope] of ramped.entries()) {
        const grant = await gate.acquire({
          scope,
          holder: 'v8',
          ttlMs: 60_000,
          policyVersion: 'v8',
        });
        // The first ramped scope holds more than two pages of intents, the others a few.
        const mine = keysOf(`v8-${scope}`, i === 0 ? 120 : 3);
        await commitIntents(gate, scope, grant.fence, mine);
        keys.push(...mine);
      }

      // Its first call lists its scopes, its first chunk moves two of them, its first page
      // cancels intents of the first; the server stops before the second page.
      store.arm('moveCutoverChunk', 4);
      await expect(
        gate.rollouts.rollback({ rolloutId: 'r1', cancelIntents: true }),
      ).rejects.toThrow(/stopped/);
      const cutover = await gate.store.getCutover(gate.tenant, 'r1/rollback');
      expect(cutover?.fences.map(({ scope }) => scope)).toEqual(ramped.slice(0, 2));
      const midway = await statusesOf(gate, keys);
      expect(midway.cancelled).toBeGreaterThan(0);
      expect(midway.pending).toBe(keys.length - midway.cancelled!);
      expect((await gate.rollouts.get('r1'))?.status).toBe('rolling_back');

      // A dispatcher claims a pending intent before the rollback is sent again.
      const [claimed] = await gate.claimIntents({ dispatcher: 'd1', ttlMs: 60_000, limit: 1 });
      expect(claimed?.status).toBe('claimed');
      const rolledBack = await gate.rollouts.rollback({ rolloutId: 'r1', cancelIntents: true });
      expect(rolledBack).toMatchObject({ status: 'rolled_back', cutoverDone: true });
      expect(await statusesOf(gate, keys)).toEqual({ cancelled: keys.length - 1, claimed: 1 });
      expect((await gate.getIntent(claimed!.effectKey))?.status).toBe('claimed');
      const cancelled = await cancellations(gate);
      expect(new Set(cancelled).size).toBe(cancelled.length);
      expect(cancelled).toHaveLength(keys.length - 1);
      expect((await gate.rollouts.report('r1'))?.rollback?.intentsCancelled).toBe(keys.length - 1);
    } finally {
      await gate.close();
    }
  });
});
