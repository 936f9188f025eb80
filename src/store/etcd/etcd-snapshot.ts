/**
 * What the optimistic engine (store/optimistic) plans on, in etcd's terms: a key's state is its
 * mod_revision and JSON value, a range is read at one revision. A guessed row is compared by
 * mod_revision (create_revision = 0 for absence) in the Txn; a range by "no key under its prefix
 * changed since the revision it was read at".
 */
import type { Rows, RowType } from '../../core/plan/transition.js';
import {
  CallState,
  OptimisticSnapshot,
  type StoreLayout,
} from '../optimistic/optimistic-snapshot.js';
import type { EtcdKeys } from './etcd-keys.js';

export interface KeyState {
  /** 0 when absent. */
  modRevision: number;
  /** The JSON row, or null when absent. */
  value: string | null;
}

export const ABSENT: KeyState = { modRevision: 0, value: null };

export interface LoadedRange {
  names: string[];
  /** The revision the range was read at. */
  revision: number;
}

export class EtcdCall extends CallState<KeyState, LoadedRange> {}

export type EtcdSnapshot = OptimisticSnapshot<KeyState, LoadedRange>;

/** Rows under their etcd keys; ranges by key prefix. */
export function etcdLayout(keys: EtcdKeys): StoreLayout<KeyState> {
  return {
    key: (tenant, ref) => keys.ref(tenant, ref),
    range: (tenant, range) => keys.range(tenant, range),
    absent: ABSENT,
    rowOf: (state) => (state.value === null ? null : (JSON.parse(state.value) as Rows[RowType])),
  };
}
