/**
 * fencegate/testing/vitest: the store conformance suite, the LangGraph.js write-ownership suite
 * and the OpenAI Agents session suite, which register vitest suites and so need vitest (an
 * optional peer dependency; the framework suites take only types from their frameworks). The
 * framework-free kit is fencegate/testing.
 */
export {
  defineStoreConformanceSuite,
  type ConformanceCapabilities,
  type ConformanceGate,
  type ConformanceStore,
  type ConformanceSubject,
  type StoreConformanceOptions,
} from '../conformance/index.js';
export { auditAfter, tenantState, type TenantState } from '../conformance/helpers.js';
export { validateWriteOwnership, type WriteOwnershipTestInitializer } from './write-ownership.js';
export {
  WRITE_OWNERSHIP_CLAUSES,
  WriteOwnershipViolation,
  type WriteOwnershipCheckpointer,
  type WriteOwnershipClause,
  type WriteOwnershipWriter,
} from './write-ownership-clauses.js';
export { validateNodeEffects, type NodeEffectsTestInitializer } from './node-effects.js';
export {
  NODE_EFFECT_CLAUSES,
  NodeEffectsViolation,
  type NodeEffectsClause,
  type NodeEffectsSubject,
} from './node-effects-clauses.js';
export { validateMemoryStore, type MemoryStoreTestInitializer } from './memory-store.js';
export {
  MEMORY_STORE_CLAUSES,
  MemoryStoreViolation,
  type MemoryRun,
  type MemoryStoreClause,
  type MemoryStoreSubject,
} from './memory-store-clauses.js';
export { validateSession, type SessionTestInitializer } from './session-contract.js';
export {
  SESSION_CLAUSES,
  SessionContractViolation,
  type SessionClause,
  type SessionContractSubject,
  type SessionUnderTest,
} from './session-clauses.js';
