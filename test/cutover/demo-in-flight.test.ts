/**
 * How many operations the incident demo has in flight at once, per store. On embedded SQLite a
 * whole batch goes together: group commit writes it as one transaction. A store over the network
 * answers each call within a deadline of its own, counted while the call waits in line behind
 * the others in flight, so there the demo keeps a window small enough that a busy machine does
 * not push the last calls of a batch past their deadline.
 */
import { describe, expect, it } from 'vitest';
import { NETWORK_BATCH } from '../../src/demo/batches.js';
import { runIncidentDemo } from '../../src/demo/incident.js';
import { Fencegate } from '../../src/gate.js';
import type { Store } from '../../src/store/store.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const WORKFLOWS = 200;
const JOBS = 30;

/** The real store, noting the most calls it had not answered yet at any one time. */
function countingInFlight(store: Store): { store: Store; most: () => number } {
  let open = 0;
  let most = 0;
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        open += 1;
        most = Math.max(most, open);
        return result.finally(() => (open -= 1));
      };
    },
  });
  return { store: counted, most: () => most };
}

describe.each(AREA_STORES)('the incident demo on $name', (kind) => {
  const stores = storesFor(kind, 'demo_in_flight');
  const embedded = kind.name === 'sqlite';
  const title = embedded
    ? 'sends every workflow of a batch at once, for one group commit'
    : `keeps at most ${NETWORK_BATCH} operations in flight`;

  it(title, async () => {
    const opened = await stores.open({ groupCommit: true });
    const { store, most } = countingInFlight(opened.store);
    const gate = await Fencegate.open({ store, tenant: 'demo' });
    try {
      const result = await runIncidentDemo({ gate, workflows: WORKFLOWS, jobs: JOBS });
      expect(result.invariants.filter((invariant) => !invariant.ok)).toEqual([]);
    } finally {
      await gate.close();
      await opened.store.close();
    }
    expect(most()).toBe(embedded ? WORKFLOWS : NETWORK_BATCH);
  });
});
