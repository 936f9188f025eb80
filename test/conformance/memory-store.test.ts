/**
 * The store conformance suite on the in-memory reference store (fencegate/adapter): each case gets
 * a fresh store and a manual store clock. One process holds it, so the cross-connection cases are
 * not run.
 */
import { Fencegate } from '../../src/gate.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import {
  defineStoreConformanceSuite,
  type ConformanceSubject,
} from '../../src/testing/vitest/index.js';

interface MemorySubject extends ConformanceSubject {
  gate: Fencegate;
}

defineStoreConformanceSuite({
  name: 'memory',
  createStore: async (): Promise<MemorySubject> => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock });
    const gate = await Fencegate.open({ store });
    return {
      gate,
      other: gate.forTenant('other'),
      store: { store, tenant: gate.tenant, otherTenant: 'other' },
      advanceClock: (ms: number) => {
        clock.advance(ms);
        return Promise.resolve();
      },
    };
  },
  destroyStore: (subject) => (subject as MemorySubject).gate.close(),
  capabilities: { sharedAcrossProcesses: false, exactLeaseExpiry: true, storeInProcess: true },
});
