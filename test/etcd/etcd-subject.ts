/**
 * Conformance and model subjects on etcd: a key prefix per test file (and per subject), a manual
 * store clock, and `connectAgain` opening a second client on the same prefix.
 */
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import type { ConformanceSubject } from '../../src/testing/vitest/index.js';
import { ManualClock } from '../../src/testing/index.js';

export interface EtcdSubject extends ConformanceSubject {
  clock: ManualClock;
  gate: Fencegate;
  store: EtcdStore;
  url: string;
  dispose(): Promise<void>;
}

/** The etcd URL of the test run: 'single' member or the 3-member 'cluster'. */
export function etcdTestUrl(which: 'single' | 'cluster'): string {
  const url = inject(which === 'single' ? 'etcdUrl' : 'etcdClusterUrl');
  if (url === null) throw new Error(inject('etcdProblem') ?? 'no etcd for the tests');
  return url;
}

/** A key prefix no other test uses: `label-<8 hex>`. */
export function uniquePrefix(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A fresh, empty store: a new key prefix on the given etcd. */
export function etcdSubjects(label: string, which: 'single' | 'cluster') {
  const filePrefix = `${label}-${randomUUID().slice(0, 8)}`;
  let count = 0;
  return {
    createStore: async (): Promise<EtcdSubject> => {
      count += 1;
      const url = `${etcdTestUrl(which)}?prefix=${filePrefix}-${count}`;
      const clock = new ManualClock();
      const store = await EtcdStore.open({ url, clock });
      const gate = await Fencegate.open({ store });
      const extra: Fencegate[] = [];
      return {
        clock,
        gate,
        ops: gate,
        store,
        url,
        other: gate.forTenant('other'),
        advanceClock: (ms: number) => {
          clock.advance(ms);
          return Promise.resolve();
        },
        connectAgain: async () => {
          const again = await Fencegate.open({ store: await EtcdStore.open({ url, clock }) });
          extra.push(again);
          return again;
        },
        async dispose() {
          for (const handle of extra) await handle.close();
          await gate.close();
        },
      };
    },
    destroyStore: async (subject: ConformanceSubject) => {
      await (subject as EtcdSubject).dispose();
    },
  };
}
