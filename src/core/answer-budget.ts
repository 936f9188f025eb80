/**
 * The byte budget of an answer that lists values (records, intents, audit entries): a page holds
 * items in order while the bytes of their values total at most the budget, and always its first
 * item, so a reader that follows the cursor always moves on. A page cut by the budget ends early
 * and carries a cursor, like one cut by its limit. One rule for every store and entry point, so
 * the memory one request holds follows the budget, not the limit times the largest value.
 */

/**
 * How many of the items, in order, a page holds: at most `limit`, and past the first only while
 * the running total of `bytes` stays at most `maxBytes`.
 */
export function itemsWithinBudget(
  bytes: Iterable<number>,
  limit: number,
  maxBytes: number,
): number {
  let kept = 0;
  let total = 0;
  for (const size of bytes) {
    if (kept === limit) break;
    total += size;
    if (kept > 0 && total > maxBytes) break;
    kept += 1;
  }
  return kept;
}

/**
 * The page of the items a store read in order (at most `limit` + 1, or fewer where its own reads
 * stopped past the budget): those within the limit and the budget, and whether more follow.
 */
export function pageWithinBudget<T>(
  read: readonly T[],
  limit: number,
  maxBytes: number,
  bytesOf: (item: T) => number,
): { items: T[]; more: boolean } {
  const kept = itemsWithinBudget(read.map(bytesOf), limit, maxBytes);
  return { items: read.slice(0, kept), more: read.length > kept };
}

/** The UTF-8 bytes of a value's JSON text as stored; 0 for none (a tombstone). */
export function jsonTextBytes(text: string | null): number {
  return text === null ? 0 : Buffer.byteLength(text, 'utf8');
}

/** The UTF-8 bytes of a value's JSON text, for a value held parsed. */
export function jsonValueBytes(value: unknown): number {
  return value === undefined ? 0 : jsonTextBytes(JSON.stringify(value) ?? null);
}
