/** The conformance suite over HTTP: two `fencegate serve` processes on one 3-member etcd cluster. */
import { randomUUID } from 'node:crypto';
import { defineHttpConformanceSuite } from '../server/http-conformance.js';
import { etcdTestUrl } from '../helpers/stores/etcd.js';

defineHttpConformanceSuite({
  name: 'http on etcd (fencegate serve + FencegateClient, three members)',
  storeUrl: () => `${etcdTestUrl('cluster')}?prefix=http-${randomUUID().slice(0, 8)}`,
  cleanup: () => undefined,
});
