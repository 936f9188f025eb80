/**
 * The rows an optimistic store's process saw last, by tenant and key: what a snapshot guesses a
 * row is when this call has not read it. Never trusted: the apply step compares every guess, so a
 * wrong or stale entry costs a conflict and a re-plan, never a wrong write. Bounded; cleared
 * whole when full, which only turns later guesses into "absent".
 */
export class KeyCache<S> {
  /** Per tenant, so a lookup hashes the key alone rather than a joined string built per call. */
  readonly #tenants = new Map<string, Map<string, S>>();
  #size = 0;
  constructor(private readonly maxEntries = 200_000) {}

  get(tenant: string, key: string): S | undefined {
    return this.#tenants.get(tenant)?.get(key);
  }

  set(tenant: string, key: string, state: S): void {
    if (this.#size >= this.maxEntries) {
      this.#tenants.clear();
      this.#size = 0;
    }
    let rows = this.#tenants.get(tenant);
    if (rows === undefined) {
      rows = new Map();
      this.#tenants.set(tenant, rows);
    }
    const before = rows.size;
    rows.set(key, state);
    this.#size += rows.size - before;
  }
}
