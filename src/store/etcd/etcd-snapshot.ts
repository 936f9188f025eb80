/**
 * A plan's view of one tenant in etcd. Rows come from three places, in order:
 *
 * 1. rows loaded during this call (linearizable reads, or the failure branch of a Txn whose
 *    compares failed): `fresh`;
 * 2. rows this process wrote or read before: `cache`, a guess that is never trusted;
 * 3. otherwise the row is guessed absent.
 *
 * Every row taken from 2 or 3 is marked `unverified`: the Txn compares it (mod_revision, or
 * create_revision = 0 for absence), so a wrong guess fails the Txn, which returns the real rows,
 * and the plan runs again. A warm commit is then one round trip, and a cold one two, the same as
 * reading first. Ranges are always read during the call (a range cannot be guessed).
 */
import type { RangeRef, Ref, RefOf, Rows, RowType, Snapshot } from '../../core/plan/transition.js';
import type { EtcdKeys } from './etcd-keys.js';

export interface KeyState {
  /** 0 when absent. */
  modRevision: number;
  /** The JSON row, or null when absent. */
  value: string | null;
}

export const ABSENT: KeyState = { modRevision: 0, value: null };

/** Rows this process saw last; bounded, cleared when full. */
export class KeyCache {
  readonly #entries = new Map<string, KeyState>();
  constructor(private readonly maxEntries = 200_000) {}

  get(key: string): KeyState | undefined {
    return this.#entries.get(key);
  }

  set(key: string, state: KeyState): void {
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    this.#entries.set(key, state);
  }
}

export interface LoadedRange {
  names: string[];
  /** The revision the range was read at. */
  revision: number;
}

export class RangeMiss extends Error {
  constructor(readonly range: RangeRef) {
    super('a range the plan needs was not loaded');
  }
}

/** What one call has learned so far; survives re-planning within the call. */
export class CallState {
  readonly fresh = new Map<string, KeyState>();
  readonly ranges = new Map<string, LoadedRange>();
}

export class EtcdSnapshot implements Snapshot {
  /** Keys the plan read that were not loaded during this call. */
  readonly unverified = new Map<string, KeyState>();
  /** Every key the plan read, with the state it planned on. */
  readonly read = new Map<string, KeyState>();

  constructor(
    readonly tenant: string,
    readonly now: number,
    private readonly keys: EtcdKeys,
    private readonly cache: KeyCache,
    private readonly call: CallState,
  ) {}

  key(ref: Ref): string {
    return this.keys.ref(this.tenant, ref);
  }

  state(key: string): KeyState {
    const fresh = this.call.fresh.get(key);
    if (fresh !== undefined) {
      this.read.set(key, fresh);
      return fresh;
    }
    const guess = this.cache.get(key) ?? ABSENT;
    this.unverified.set(key, guess);
    this.read.set(key, guess);
    return guess;
  }

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    const state = this.state(this.key(ref as Ref));
    return state.value === null ? null : (JSON.parse(state.value) as Rows[K]);
  }

  list(range: RangeRef): string[] {
    const loaded = this.call.ranges.get(this.keys.range(this.tenant, range));
    if (loaded === undefined) throw new RangeMiss(range);
    return loaded.names;
  }
}
