/**
 * The in-memory reference store (fencegate/adapter) against the store conformance suite, each
 * case on a fresh store with a manual store clock, and against the SEMANTICS model, every run in a
 * tenant of its own on one store whose whole history must verify at the end. One process holds
 * the store, so the cross-connection cases are not run.
 */
import { describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { checkStoreAgainstModel } from '../../src/testing/index.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import {
  defineStoreConformanceSuite,
  type ConformanceSubject,
} from '../../src/testing/vitest/index.js';

interface MemorySubject extends ConformanceSubject {
  gate: Fencegate;
}

async function memorySubject(): Promise<MemorySubject> {
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
}

defineStoreConformanceSuite({
  name: 'memory',
  createStore: memorySubject,
  destroyStore: (subject) => (subject as MemorySubject).gate.close(),
  capabilities: { sharedAcrossProcesses: false, exactLeaseExpiry: true, storeInProcess: true },
});

describe('the model check on memory', () => {
  it('the store answers like the SEMANTICS model (100 runs)', { timeout: 300_000 }, async () => {
    const subject = await memorySubject();
    let runs = 0;
    await checkStoreAgainstModel({
      createStore: () => {
        runs += 1;
        return Promise.resolve({
          gate: subject.gate.forTenant(`run-${runs}`),
          advanceClock: (ms: number) => subject.advanceClock(ms),
        });
      },
      destroyStore: () => Promise.resolve(),
      numRuns: 100,
      onSeed: (seed) => {
        console.log(`model check seed ${seed}`);
      },
    });
    const result = await verifyStore(subject.gate.store);
    expect(result.violations).toEqual([]);
    expect(result.checked).toBeGreaterThan(0);
    await subject.gate.close();
  });
});
