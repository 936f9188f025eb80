/**
 * What the optimistic engine (store/optimistic) plans on, in PostgreSQL's terms: a key's state is
 * its row and row_version, a range is its names with their hash as the database computes it. The
 * apply step compares every row a plan read, wherever it came from, under its lock
 * (postgres-sql-apply.ts), and a range by its hash.
 */
import { refKey, type RangeRef, type Rows, type RowType } from '../../core/plan/transition.js';
import { KeyCache } from '../optimistic/key-cache.js';
import {
  CallState as OptimisticCall,
  OptimisticSnapshot,
  type StoreLayout,
} from '../optimistic/optimistic-snapshot.js';

export interface KeyState {
  /** The row_version read; 0 when the key has no row. */
  version: number;
  row: Rows[RowType] | null;
}

export const ABSENT: KeyState = { version: 0, row: null };

export interface LoadedRange {
  names: string[];
  /** The names' hash as the database computes it: what the apply step compares. */
  hash: string;
}

/** Rows this process saw last, by tenant and ref; cleared when full. */
export class RowCache extends KeyCache<KeyState> {}

export class CallState extends OptimisticCall<KeyState, LoadedRange> {}

export type PostgresSnapshot = OptimisticSnapshot<KeyState, LoadedRange>;

/** A range's identity within a tenant (its due time and limit included). */
export function rangeKey(range: RangeRef): string {
  return JSON.stringify(range);
}

/** Rows by their ref's key within the tenant (the tenant is a column); ranges by their JSON. */
export const POSTGRES_LAYOUT: StoreLayout<KeyState> = {
  key: (_tenant, ref) => refKey(ref),
  range: (_tenant, range) => rangeKey(range),
  absent: ABSENT,
  rowOf: (state) => state.row,
};

/** A snapshot on its own, for a plan applied outside the engine (tests hold one open). */
export function postgresSnapshot(
  tenant: string,
  now: number,
  cache: RowCache,
  call: CallState,
): PostgresSnapshot {
  return new OptimisticSnapshot(tenant, now, POSTGRES_LAYOUT, cache, call);
}
