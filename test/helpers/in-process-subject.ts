/**
 * How the in-process stores (memory, the CAS map) are checked: a conformance subject on a store
 * with a manual clock, and the model check on one store, every run in a tenant of its own, with
 * the store's whole history verified at the end.
 */
import { expect } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import type { Store } from '../../src/store/store.js';
import { checkStoreAgainstModel } from '../../src/testing/index.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { ConformanceSubject } from '../../src/testing/vitest/index.js';

export interface InProcessSubject extends ConformanceSubject {
  gate: Fencegate;
}

/** A subject on the store `open` makes with the subject's manual clock. */
export async function inProcessSubject(
  open: (clock: ManualClock) => Store,
): Promise<InProcessSubject> {
  const clock = new ManualClock();
  const store = open(clock);
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

export async function checkModelPerTenant(
  subject: { gate: Fencegate; advanceClock: (ms: number) => Promise<void> },
  numRuns: number,
): Promise<void> {
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
    numRuns,
    onSeed: (seed) => {
      console.log(`model check seed ${seed}`);
    },
  });
  const result = await verifyStore(subject.gate.store);
  expect(result.violations).toEqual([]);
  expect(result.checked).toBeGreaterThan(0);
  await subject.gate.close();
}
