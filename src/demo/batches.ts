/** Bounded concurrency: items in batches sent together, each batch awaited before the next. */

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
