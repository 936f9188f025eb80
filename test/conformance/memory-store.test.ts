/**
 * The in-memory reference store (fencegate/adapter) against the store conformance suite, each
 * case on a fresh store with a manual store clock, and against the SEMANTICS model, every run in a
 * tenant of its own on one store whose whole history must verify at the end. One process holds
 * the store, so the cross-connection cases are not run.
 */
import { describe, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import {
  checkModelPerTenant,
  inProcessSubject,
  type InProcessSubject,
} from '../helpers/in-process-subject.js';
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';

function memorySubject(): Promise<InProcessSubject> {
  return inProcessSubject((clock) => new MemoryStore({ clock }));
}

defineStoreConformanceSuite({
  name: 'memory',
  createStore: memorySubject,
  destroyStore: (subject) => (subject as InProcessSubject).gate.close(),
  capabilities: { sharedAcrossProcesses: false, exactLeaseExpiry: true, storeInProcess: true },
});

describe('the model check on memory', () => {
  it('the store answers like the SEMANTICS model (100 runs)', { timeout: 300_000 }, async () => {
    await checkModelPerTenant(await memorySubject(), 100);
  });
});
