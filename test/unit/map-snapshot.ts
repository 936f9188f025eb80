/**
 * An in-memory snapshot for the planner tests: rows in a map keyed by their ref, ranges listed by
 * hand. The plans read it as a store's transaction would, and `apply` writes a transition's rows.
 */
import type {
  Put,
  RangeRef,
  Ref,
  RefOf,
  Rows,
  RowType,
  Snapshot,
} from '../../src/core/plan/transition.js';

export class MapSnapshot implements Snapshot {
  readonly tenant = 'acme';
  readonly rows = new Map<string, unknown>();
  readonly ranges = new Map<string, string[]>();
  /** Every ref a plan asked for, in order. */
  readonly reads: Ref[] = [];
  /** Every range a plan listed, in order. */
  readonly listed: RangeRef[] = [];
  constructor(public now = 1_000) {}

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    this.reads.push(ref as Ref);
    return (this.rows.get(JSON.stringify(ref)) as Rows[K] | undefined) ?? null;
  }

  list(range: RangeRef): string[] {
    this.listed.push(range);
    // A page is its range's names after its position, as far as its limit.
    if (range.type === 'page') {
      const names = this.ranges.get(JSON.stringify(range.of)) ?? [];
      return names.filter((name) => name > range.after).slice(0, range.limit);
    }
    // The claim's `due` hint is only a hint: this store lists every open intent.
    const key = range.type === 'openIntents' ? { type: range.type } : range;
    return this.ranges.get(JSON.stringify(key)) ?? [];
  }

  set(ref: Ref, row: unknown): void {
    this.rows.set(JSON.stringify(ref), row);
  }

  /** Writes a transition's rows, as a store would. */
  apply(puts: Put[]): void {
    for (const { row, ...ref } of puts) this.set(ref, row);
  }
}
