/**
 * A plan's view of one tenant in an optimistic store. Rows come from, in order:
 *
 * 1. the rows read during this call (a read, or the current rows a conflicting send answered
 *    with): `call.fresh`;
 * 2. the rows this process wrote or read before: the key cache, a guess never trusted;
 * 3. otherwise the row is guessed absent.
 *
 * Every row a plan reads is in `read` with the state it planned on, and those from 2 or 3 are
 * also in `unverified`: the store's send compares them (with everything the transition expects),
 * so a wrong guess fails the send, which answers the current rows, and the plan runs again. A warm
 * write is one round trip, a cold one two, the same as reading first. Ranges cannot be guessed:
 * a plan that lists one not read in this call throws RangeMiss, and the engine reads it.
 */
import type { RangeRef, Ref, RefOf, Rows, RowType, Snapshot } from '../../core/plan/transition.js';
import type { KeyCache } from './key-cache.js';

/** How a store names rows and ranges, and what its stored state of one key is. */
export interface StoreLayout<S> {
  /** The store's key of a row of the tenant. */
  key(tenant: string, ref: Ref): string;
  /** The store's name of a range of the tenant (its key prefix, say): a loaded range's identity. */
  range(tenant: string, range: RangeRef): string;
  /** The state of a key that has no row. */
  readonly absent: S;
  /** The row a state holds, or null when absent. */
  rowOf(state: S): Rows[RowType] | null;
}

/** A range read in this call: the names a plan lists, plus what the store compares it by. */
export interface LoadedRange {
  names: string[];
}

export class RangeMiss extends Error {
  constructor(readonly range: RangeRef) {
    super('a range the plan needs was not loaded');
  }
}

/** What one call has read so far, by store key and range name; survives re-planning. */
export class CallState<S, R extends LoadedRange = LoadedRange> {
  readonly fresh = new Map<string, S>();
  readonly ranges = new Map<string, R>();
}

/** A key a plan read, with the ref it names and the state the plan saw. */
export interface ReadKey<S> {
  ref: Ref;
  state: S;
}

export class OptimisticSnapshot<S, R extends LoadedRange = LoadedRange> implements Snapshot {
  /** Every key the plan read, with the state it planned on. */
  readonly read = new Map<string, ReadKey<S>>();
  /** The keys of `read` not read in this call: guesses the send must compare. */
  readonly unverified = new Map<string, ReadKey<S>>();

  constructor(
    readonly tenant: string,
    readonly now: number,
    readonly layout: StoreLayout<S>,
    private readonly cache: KeyCache<S>,
    readonly call: CallState<S, R>,
  ) {}

  key(ref: Ref): string {
    return this.layout.key(this.tenant, ref);
  }

  /** The state of a key as this snapshot sees it, marked read (and unverified when guessed). */
  state(ref: Ref): S {
    const key = this.key(ref);
    const seen = this.read.get(key);
    if (seen !== undefined) return seen.state;
    const fresh = this.call.fresh.get(key);
    const entry = { ref, state: fresh ?? this.cache.get(this.tenant, key) ?? this.layout.absent };
    this.read.set(key, entry);
    if (fresh === undefined) this.unverified.set(key, entry);
    return entry.state;
  }

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    return this.layout.rowOf(this.state(ref as Ref)) as Rows[K] | null;
  }

  /** The loaded range a plan lists, or undefined when this call has not read it. */
  loaded(range: RangeRef): R | undefined {
    return this.call.ranges.get(this.layout.range(this.tenant, range));
  }

  list(range: RangeRef): string[] {
    const loaded = this.loaded(range);
    if (loaded === undefined) throw new RangeMiss(range);
    return loaded.names;
  }
}
