/**
 * The store of the suites whose subject is not a store: HTTP routing, auth, validation, answer
 * budgets, the clients, the integrations' own logic, the dashboard, metrics, the dispatcher,
 * cutovers, the rollout driver.
 * They run on the in-memory reference store (src/store/memory), which passes the conformance suite
 * and the model check, so what they prove of the layers above holds on every store; it opens no
 * file and runs no SQL, so such a suite costs what its subject costs.
 *
 * Suites whose subject is a store, or a behaviour each store decides (durability, paging plans,
 * busy waits, retention, tokens…), take their stores from stores.ts (STORES, AREA_STORES); a suite
 * that needs a store URL (the CLI, a child process, `startServer`) takes ONE_STORE or a SQLite URL.
 */
import type { Clock } from '../../src/core/clock.js';
import { Fencegate, type FencegateOptions } from '../../src/gate.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';

/** A fresh, empty in-memory store, in store time of `clock` (the host's clock when absent). */
export function memoryStore(clock?: Clock): MemoryStore {
  return new MemoryStore(clock === undefined ? {} : { clock });
}

/** A gate on a fresh in-memory store (on `options.clock`), which closing the gate closes. */
export function memoryGate(options: Omit<FencegateOptions, 'store'> = {}): Promise<Fencegate> {
  return Fencegate.open({ ...options, store: memoryStore(options.clock) });
}
