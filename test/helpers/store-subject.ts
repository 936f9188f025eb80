/**
 * Conformance and model subjects on any store of the list: a fresh store per subject with a
 * manual store clock (on connections the factory keeps warm across subjects), tenant A and tenant B on it, the raw Store under them, and `connectAgain`
 * opening a second handle (pool, client, file handle) on the same store.
 */
import { Fencegate } from '../../src/gate.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type {
  ConformanceStore,
  ConformanceSubject,
  StoreConformanceOptions,
} from '../../src/testing/vitest/index.js';
import { storesFor, type TestStoreKind } from './stores.js';

export interface StoreSubject extends ConformanceSubject {
  clock: ManualClock;
  gate: Fencegate;
  store: ConformanceStore;
  url: string;
  /** Closes every handle and hands the store back to its factory. */
  dispose(): Promise<void>;
}

export interface StoreSubjects {
  createStore: () => Promise<StoreSubject>;
  destroyStore: (subject: ConformanceSubject) => Promise<void>;
}

/** Subjects on fresh stores of `kind`; call at the top level of a file or describe block. */
export function storeSubjects(kind: TestStoreKind, label: string): StoreSubjects {
  const stores = storesFor(kind, label);
  return {
    createStore: async () => {
      const clock = new ManualClock();
      const { store, url } = await stores.open({ clock });
      const gate = await Fencegate.open({ store });
      const extra: Fencegate[] = [];
      return {
        clock,
        gate,
        url,
        other: gate.forTenant('other'),
        store: { store, tenant: gate.tenant, otherTenant: 'other' },
        advanceClock: (ms: number) => {
          clock.advance(ms);
          return Promise.resolve();
        },
        connectAgain: async () => {
          const again = await Fencegate.open({ store: await stores.reopen(url, { clock }) });
          extra.push(again);
          return again;
        },
        async dispose() {
          for (const handle of extra) await handle.close();
          await gate.close();
          await stores.recycle(url);
        },
      };
    },
    destroyStore: (subject) => (subject as StoreSubject).dispose(),
  };
}

/** The conformance suite's options for `kind`: every case on a fresh store of that kind. */
export function conformanceOn(kind: TestStoreKind): StoreConformanceOptions {
  const subjects = storeSubjects(kind, `conformance_${kind.name.replace(/[^a-z0-9]+/g, '_')}`);
  return {
    name: kind.name,
    createStore: subjects.createStore,
    destroyStore: subjects.destroyStore,
    capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true, storeInProcess: true },
  };
}
