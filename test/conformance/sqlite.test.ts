/** The store conformance suite on SQLite: a fresh temp file and manual clock per test. */
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { createSqliteSubject, destroySqliteSubject } from './sqlite-subject.js';

defineStoreConformanceSuite({
  name: 'sqlite',
  createStore: createSqliteSubject,
  destroyStore: destroySqliteSubject,
  capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true },
});
