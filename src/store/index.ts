/**
 * `fencegate/store`: opening stores and what every store shares — the Store contract, the registry
 * of store kinds (and registering one of your own), the clock and limits a store is opened with, and the canonical JSON and
 * fingerprints stores keep. The PostgreSQL store and its fencing helpers are `fencegate/postgres`.
 */
export { openStore, redactUrl, DEFAULT_STORE_URL, type OpenStoreOptions } from './open.js';
export {
  registerStoreKind,
  STORE_KINDS,
  storeKindOf,
  storeKinds,
  type StoreKind,
  type StoreOpener,
} from './registry.js';
export type { Store, StoreCapabilities } from './store.js';
export type { TransactionCapabilities } from '../core/transaction-limits.js';
export { systemClock, type Clock } from '../core/clock.js';
export { DEFAULT_LIMITS, type Limits } from '../core/limits.js';
export { canonicalJson, fingerprint } from '../core/canonical.js';
