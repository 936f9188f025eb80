/**
 * Which operations may share one group-commit batch, on a store that applies a batch as one
 * optimistic transaction (PostgreSQL, etcd): members may read the same key, since each compares
 * the version it read and no member changes it, but a key one member writes no other may read or
 * write, so each member is applied exactly as it was planned alone. Without the shared reads,
 * every acquire of a new scope (which reads the tenant's active rollouts) would be a batch of one.
 */
export class BatchKeys {
  readonly #read = new Set<string>();
  readonly #written = new Set<string>();

  /**
   * Takes the keys of an operation that reads `read` (the keys it writes included) and writes
   * `written`, when they conflict with no member taken so before; false, and nothing taken, when
   * they do.
   */
  take(read: Iterable<string>, written: Iterable<string>): boolean {
    const reads = [...read];
    const writes = [...written];
    if (reads.some((key) => this.#written.has(key))) return false;
    if (writes.some((key) => this.#read.has(key) || this.#written.has(key))) return false;
    for (const key of reads) this.#read.add(key);
    for (const key of writes) this.#written.add(key);
    return true;
  }
}
