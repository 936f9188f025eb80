/** The store conformance suite on etcd: a single member and a 3-member cluster, a key prefix per test. */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { etcdSubjects } from './etcd-subject.js';

for (const which of ['single', 'cluster'] as const) {
  const subjects = etcdSubjects(`conformance-${which}`, which);
  defineStoreConformanceSuite({
    name: `etcd (${which === 'single' ? 'one member' : 'three members'})`,
    createStore: subjects.createStore,
    destroyStore: subjects.destroyStore,
    capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true },
  });
}
