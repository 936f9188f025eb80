/**
 * A plan's view of one tenant in PostgreSQL. Rows come from, in order: the rows loaded during this
 * call (a read, or the current rows a failed apply answered with); the rows this process wrote or
 * read before (a bounded cache, never trusted); otherwise the row is guessed absent. Every row a
 * plan reads, wherever it came from, is compared by the apply step under its lock
 * (postgres-sql-apply.ts), so a wrong guess costs one round trip and a re-plan, never a wrong
 * write: a warm commit is one round trip. Ranges are read during the call, never guessed.
 */
import {
  refKey,
  type RangeRef,
  type Ref,
  type RefOf,
  type Rows,
  type RowType,
  type Snapshot,
} from '../../core/plan/transition.js';

export interface KeyState {
  /** The row_version read; 0 when the key has no row. */
  version: number;
  row: Rows[RowType] | null;
}

export const ABSENT: KeyState = { version: 0, row: null };

/** Rows this process saw last, by tenant and ref; cleared when full. */
export class RowCache {
  /** Per tenant, so a lookup hashes the key alone rather than a joined string built per call. */
  readonly #tenants = new Map<string, Map<string, KeyState>>();
  #size = 0;
  constructor(private readonly maxEntries = 200_000) {}

  get(tenant: string, key: string): KeyState | undefined {
    return this.#tenants.get(tenant)?.get(key);
  }

  set(tenant: string, key: string, state: KeyState): void {
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

export interface LoadedRange {
  names: string[];
  /** The names' hash as the database computes it: what the apply step compares. */
  hash: string;
}

export class RangeMiss extends Error {
  constructor(readonly range: RangeRef) {
    super('a range the plan needs was not loaded');
  }
}

/** A range's identity within a tenant (its due time and limit included). */
export function rangeKey(range: RangeRef): string {
  return JSON.stringify(range);
}

/** What one call has learned so far; survives re-planning within the call. */
export class CallState {
  readonly fresh = new Map<string, KeyState>();
  readonly ranges = new Map<string, LoadedRange>();
}

export class PostgresSnapshot implements Snapshot {
  /** Every key the plan read, with the ref and the state it planned on. */
  readonly read = new Map<string, { ref: Ref; state: KeyState }>();

  constructor(
    readonly tenant: string,
    readonly now: number,
    private readonly cache: RowCache,
    readonly call: CallState,
  ) {}

  /** The state of a key as this snapshot sees it, marked read. */
  state(ref: Ref): KeyState {
    const key = refKey(ref);
    const seen = this.read.get(key);
    if (seen !== undefined) return seen.state;
    const state = this.call.fresh.get(key) ?? this.cache.get(this.tenant, key) ?? ABSENT;
    this.read.set(key, { ref, state });
    return state;
  }

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    return this.state(ref as Ref).row as Rows[K] | null;
  }

  list(range: RangeRef): string[] {
    const loaded = this.call.ranges.get(rangeKey(range));
    if (loaded === undefined) throw new RangeMiss(range);
    return loaded.names;
  }
}
