/**
 * The store conformance suite on etcd with one member and with three (test/helpers/stores.ts). Each case gets a fresh store
 * and a manual store clock.
 */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { conformanceOn } from '../helpers/store-subject.js';
import { storesOf } from '../helpers/stores.js';

for (const kind of storesOf('etcd')) defineStoreConformanceSuite(conformanceOn(kind));
