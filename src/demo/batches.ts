/** Bounded concurrency: items in batches sent together, each batch awaited before the next. */
import type { Store } from '../store/store.js';

/** Operations sent together on embedded SQLite: group commit writes a batch as one transaction. */
export const EMBEDDED_BATCH = 500;

/**
 * Operations sent together on a store over the network (PostgreSQL, etcd). Each call there has a
 * deadline of its own (an etcd call 1.5 s), counted while it waits in line, in this process and in
 * the server, behind every other call in flight: a batch of hundreds pushes its last calls past
 * their deadline on a busy machine, and they end store_unavailable or outcome_unknown.
 */
export const NETWORK_BATCH = 64;

/** How many operations the demo sends together on `store`. */
export function batchSizeFor(store: Store): number {
  return store.kind === 'sqlite' || store.kind === 'memory' ? EMBEDDED_BATCH : NETWORK_BATCH;
}

/**
 * Runs `work` on every item, `size` at a time with Promise.all. On SQLite with group commit, the
 * commits of one batch share one transaction; the bound keeps memory and latency flat.
 */
export async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
  onBatch?: (done: number) => void,
): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    const batch = items.slice(start, start + size);
    results.push(...(await Promise.all(batch.map(work))));
    onBatch?.(Math.min(items.length, start + size));
  }
  return results;
}
