/** The store conformance suite on PostgreSQL: its own schema, emptied for every test, and a manual store clock. */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { postgresSubjects } from './pg-subject.js';

const subjects = postgresSubjects('conformance');

defineStoreConformanceSuite({
  name: 'postgres',
  createStore: subjects.createStore,
  destroyStore: subjects.destroyStore,
  capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true },
});
