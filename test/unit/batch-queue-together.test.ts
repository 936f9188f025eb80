/**
 * Writes sent together (one commitMany's commits) reach a group commit as one group: a queue that
 * starts a batch as soon as a write arrives holds them until the last is queued, and a batch takes
 * the group whole when it has room for it. Admission stays fair: a group waits behind its tenant's
 * earlier writes, and another tenant's write still gets its turn.
 */
import { describe, expect, it } from 'vitest';
import { BatchQueue, type QueuedJob } from '../../src/store/optimistic/batch-queue.js';
import { FairQueue } from '../../src/store/optimistic/fair-queue.js';

interface Job extends QueuedJob {
  n: number;
}

/** An eager queue (a batch starts with the first write) recording each batch as `tenant:n`. */
function eagerQueue(maxInFlight: number) {
  const batches: string[][] = [];
  const queue = new BatchQueue<Job>(
    { maxBatch: 16, maxInFlight, quantum: 16, oneTenant: true, gather: false },
    async (batch) => {
      batches.push(batch.map((job) => `${job.tenant}:${job.n}`));
      await new Promise((resolve) => setImmediate(resolve));
      for (const job of batch) job.resolve(job.n);
    },
  );
  return { batches, queue };
}

function names(jobs: { tenant: string; n: number }[]): string[] {
  return jobs.map((job) => `${job.tenant}:${job.n}`);
}

function range(tenant: string, from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => `${tenant}:${from + i}`);
}

describe('writes sent together in the group-commit queue', () => {
  it('on an idle eager queue form one batch, where sent one by one the first go alone', async () => {
    const { batches, queue } = eagerQueue(2);
    const send = (n: number) => queue.submit<number>({ tenant: 'a', n, operationId: undefined });
    await Promise.all(Array.from({ length: 8 }, (_, n) => send(n)));
    // Without `together`: a batch per free slot at once, then the rest.
    expect(batches).toEqual([['a:0'], ['a:1'], range('a', 2, 8)]);
    batches.length = 0;
    await Promise.all(queue.together(() => Array.from({ length: 8 }, (_, n) => send(n))));
    expect(batches).toEqual([range('a', 0, 8)]);
  });

  it('a group waits behind its tenant’s earlier write, then goes whole; another tenant keeps its turn', async () => {
    const { batches, queue } = eagerQueue(1);
    const send = (tenant: string, n: number) =>
      queue.submit<number>({ tenant, n, operationId: undefined });
    const running = send('a', 0);
    const earlier = send('a', 1);
    const group = queue.together(() => Array.from({ length: 16 }, (_, i) => send('a', 2 + i)));
    const other = send('b', 0);
    await Promise.all([running, earlier, ...group, other]);
    expect(batches).toEqual([['a:0'], ['a:1'], ['b:0'], range('a', 2, 18)]);
  });

  it('a group larger than a batch is split, in order', () => {
    const queue = new FairQueue<{ tenant: string; n: number; group?: object }>(4);
    const group = {};
    for (let n = 0; n < 6; n += 1) queue.push({ tenant: 'a', n, group });
    expect(names(queue.take(4, true))).toEqual(range('a', 0, 4));
    expect(names(queue.take(4, true))).toEqual(range('a', 4, 6));
  });

  it('a batch of several tenants ends before a group it has no room for; the next starts with it', () => {
    const queue = new FairQueue<{ tenant: string; n: number; group?: object }>(4);
    queue.push({ tenant: 'a', n: 0 });
    const group = {};
    for (let n = 0; n < 4; n += 1) queue.push({ tenant: 'b', n, group });
    queue.push({ tenant: 'c', n: 0 });
    expect(names(queue.take(4, false))).toEqual(['a:0']);
    expect(names(queue.take(8, false))).toEqual([...range('b', 0, 4), 'c:0']);
    expect(queue.size).toBe(0);
  });
});
