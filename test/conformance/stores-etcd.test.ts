/**
 * The store conformance suite on etcd with one member (test/helpers/stores.ts). Each case gets a
 * fresh store and a manual store clock. The three-member deployment runs the same suite over HTTP
 * (test/server/conformance-http-etcd.test.ts: two servers on the cluster) and the model check, so
 * it is not run here a second time.
 */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { conformanceOn } from '../helpers/store-subject.js';
import { storesOf } from '../helpers/stores.js';

const variantOverHttp = (kind: { everyArea: boolean; overHttp: boolean }): boolean =>
  !kind.everyArea && kind.overHttp;

for (const kind of storesOf('etcd').filter((kind) => !variantOverHttp(kind))) {
  defineStoreConformanceSuite(conformanceOn(kind));
}
