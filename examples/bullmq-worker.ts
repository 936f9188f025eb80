/**
 * A BullMQ job whose lock lapsed runs twice: BullMQ's stalled checker hands it to worker B while
 * worker A (frozen, say by a long GC pause) still holds it in memory. With fencedProcessor the job
 * still runs twice, but A's late write is refused at the commit boundary: B's stands.
 *
 *   npx tsx examples/bullmq-worker.ts          # Redis at FENCEGATE_REDIS_URL or 127.0.0.1:6379
 */
import { Queue, Worker } from 'bullmq';
import { Fencegate, type CommitResult } from 'fencegate';
import { fencedProcessor } from 'fencegate/bullmq';
import { Redis } from 'ioredis';

const redisUrl = process.env.FENCEGATE_REDIS_URL ?? 'redis://127.0.0.1:6379';
// An ioredis connection each for the queue and the two workers, as separate processes would have;
// BullMQ requires maxRetriesPerRequest: null of a worker's connection.
const connect = () => new Redis(redisUrl, { maxRetriesPerRequest: null });
const connections = { queue: connect(), a: connect(), b: connect() };
const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const queueName = `compaction-${process.pid}`;
const queue = new Queue(queueName, { connection: connections.queue });

const outcomes = new Map<string, CommitResult>();
let aFroze: () => void = () => undefined;
const whenAFroze = new Promise<void>((resolve) => (aFroze = resolve));
let bCommitted: () => void = () => undefined;
const whenBCommitted = new Promise<void>((resolve) => (bCommitted = resolve));

// The processor: compact the workflow's memory under the run's fence.
const compact = (worker: string) =>
  fencedProcessor<{ workflow: string }>(
    gate,
    { scope: (job) => `${job.data.workflow}/memory` },
    async (job, ctx) => {
      const summary = await gate.getRecord(ctx.scope, 'summary');
      if (worker === 'A') {
        aFroze(); // A freezes right after reading.
        await whenBCommitted;
      }
      const result = await ctx.commit({
        writes: [{ name: 'summary', expectRevision: summary.revision, value: { by: worker } }],
      });
      outcomes.set(worker, result);
      if (worker === 'B') bCommitted();
    },
  );

await queue.add('compact', { workflow: 'wf-123' });
// A's lock lasts 1 s and is never renewed; B checks for stalled jobs every 300 ms.
const a = new Worker(queueName, compact('A'), {
  connection: connections.a,
  lockDuration: 1_000,
  skipLockRenewal: true,
  skipStalledCheck: true,
});
a.on('error', () => undefined); // A's late completion: BullMQ already gave its lock to B.
await whenAFroze;
const b = new Worker(queueName, compact('B'), {
  connection: connections.b,
  lockDuration: 5_000,
  stalledInterval: 300,
});

while (outcomes.size < 2) await new Promise((resolve) => setTimeout(resolve, 50));
for (const [worker, result] of outcomes) {
  const verdict =
    result.outcome === 'committed'
      ? `committed at fence ${result.fence}`
      : `rejected ${result.error.code} (${result.error.message})`;
  console.log(`worker ${worker}: ${verdict}`);
}
console.log('summary:', JSON.stringify((await gate.getRecord('wf-123/memory', 'summary')).value));
console.log('verify:', (await gate.verify()).ok ? 'no violations' : 'VIOLATIONS');

await Promise.all([a.close(true), b.close()]);
await queue.obliterate({ force: true });
await queue.close();
await Promise.all(Object.values(connections).map((connection) => connection.quit()));
await gate.close();
process.exit(outcomes.get('A')?.outcome === 'rejected' ? 0 : 1);
