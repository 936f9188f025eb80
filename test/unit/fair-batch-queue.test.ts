/**
 * The group-commit queue shared by the optimistic stores admits tenants by deficit round-robin: a
 * tenant with a deep queue cannot starve another tenant's single commit.
 */
import { describe, expect, it } from 'vitest';
import { BatchQueue, type QueuedJob } from '../../src/store/optimistic/batch-queue.js';
import { GroupCommitter } from '../../src/store/group-commit.js';
import { FairQueue } from '../../src/store/optimistic/fair-queue.js';

interface Job extends QueuedJob {
  n: number;
}

/** Runs batches one at a time, recording each batch's jobs as `tenant:n`. */
function recordingQueue(oneTenant: boolean, gather: boolean) {
  const batches: string[][] = [];
  const queue = new BatchQueue<Job>(
    { maxBatch: 16, maxInFlight: 1, quantum: oneTenant ? 16 : 4, oneTenant, gather },
    async (batch) => {
      await new Promise((resolve) => setImmediate(resolve));
      batches.push(batch.map((job) => `${job.tenant}:${job.n}`));
      for (const job of batch) job.resolve(job.n);
    },
  );
  return { batches, queue };
}

describe('fair admission in the group-commit queue', () => {
  for (const oneTenant of [true, false]) {
    it(`a tenant with 200 queued commits does not starve another tenant's one (${oneTenant ? 'one tenant per batch' : 'mixed batches'})`, async () => {
      const { batches, queue } = recordingQueue(oneTenant, !oneTenant);
      const deep = Array.from({ length: 200 }, (_, n) =>
        queue.submit<number>({ tenant: 'deep', n, operationId: undefined }),
      );
      const single = queue.submit<number>({ tenant: 'single', n: 0, operationId: undefined });
      await Promise.all([...deep, single]);
      const at = batches.findIndex((batch) => batch.includes('single:0'));
      // FIFO would run it after all 200 (the 14th batch of 16); fairly, within one rotation of the
      // batch already running (a first write goes alone at once when batches start eagerly).
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThanOrEqual(2);
      // The deep tenant's commits still run in the order they came.
      const deepOrder = batches.flat().filter((name) => name.startsWith('deep:'));
      expect(deepOrder).toEqual(deep.map((_, n) => `deep:${n}`));
    });
  }

  it('a tenant gains its quantum per turn, and a write put back runs first among its own', () => {
    const queue = new FairQueue<{ tenant: string; n: number }>(2);
    for (let n = 0; n < 5; n += 1) queue.push({ tenant: 'a', n });
    queue.push({ tenant: 'b', n: 0 });
    const first = queue.take(3, false);
    expect(first.map((job) => `${job.tenant}${job.n}`)).toEqual(['a0', 'a1', 'b0']);
    queue.pushFront([{ tenant: 'a', n: 1 }]);
    // Its turn: the quantum (2) again, the put-back write first.
    expect(queue.take(10, true).map((job) => job.n)).toEqual([1, 2]);
    expect(queue.size).toBe(2);
  });

  it("SQLite's group commit admits a tenant's single write into the first batch beside a storm of 1,200", async () => {
    const batches: string[][] = [];
    const committer = new GroupCommitter<{ tenant: string; n: number }, number>(
      (items) => {
        batches.push(items.map((item) => `${item.tenant}:${item.n}`));
        return items.map((item) => ({ ok: true, value: item.n }));
      },
      { tenantOf: (item) => item.tenant, quantum: 64 },
    );
    const storm = Array.from({ length: 1200 }, (_, n) => committer.submit({ tenant: 'storm', n }));
    const single = committer.submit({ tenant: 'single', n: 0 });
    expect(committer.depths()).toEqual({ waiting: 1201, tenants: 2, deepestTenant: 1200 });
    await Promise.all([...storm, single]);
    // In arrival order it would be the last write of the third batch of 512.
    expect(batches[0]).toContain('single:0');
    expect(batches[0]).toHaveLength(512);
    const stormOrder = batches.flat().filter((name) => name.startsWith('storm:'));
    expect(stormOrder).toEqual(storm.map((_, n) => `storm:${n}`));
    expect(committer.depths()).toEqual({ waiting: 0, tenants: 0, deepestTenant: 0 });
  });

  it('without tenants, group commit keeps arrival order in batches of its maximum', async () => {
    const batches: number[][] = [];
    const committer = new GroupCommitter<number, number>((items) => {
      batches.push(items);
      return items.map((value) => ({ ok: true, value }));
    }, 4);
    await Promise.all(Array.from({ length: 10 }, (_, n) => committer.submit(n)));
    expect(batches).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ]);
  });
});
