/**
 * fencegate/testing/vitest: the store conformance suite, which registers vitest suites and so
 * needs vitest (an optional peer dependency). The framework-free kit is fencegate/testing.
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
