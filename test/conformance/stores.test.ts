/**
 * The store conformance suite on every store of the list (test/helpers/stores.ts): SQLite,
 * PostgreSQL, etcd with one member and with three. Each case gets a fresh store and a manual store
 * clock.
 */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { conformanceOn } from '../helpers/store-subject.js';
import { STORES } from '../helpers/stores.js';

for (const kind of STORES) defineStoreConformanceSuite(conformanceOn(kind));
