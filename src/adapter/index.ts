/**
 * `fencegate/adapter`: what a new store is built from (docs/adapters.md). The rows, refs and
 * transitions core plans in, the planners, the class that maps every mutating Store method onto
 * them (a store then provides loading, applying and its reads), the plan rows as the Store's
 * answers, the store errors, the in-memory reference store built on the same class, and
 * `registerStoreKind`, which lets `openStore` and `fencegate serve` open the new store by URL. The
 * conformance suite to run is `defineStoreConformanceSuite` from `fencegate/testing/vitest`.
 */
export type {
  Answer,
  CutoverRow,
  CutoverStepRow,
  DeletionRow,
  OperationRow,
  Put,
  PutOf,
  RangeRef,
  RecordRow,
  Ref,
  RefOf,
  Rows,
  RowType,
  ScopeRow,
  Snapshot,
  Transition,
} from '../core/plan/transition.js';
export { isRangeRef, readOnly, refKey, refused, wholeRowPut } from '../core/plan/transition.js';
export type { NewAuditEntry } from '../core/audit-entry.js';
export type { FenceGrant } from '../core/fence-holder.js';
export { planAbandon, planCommit } from '../core/plan/plan-commit.js';
export {
  planCutoverChunk,
  planCutoverStart,
  planRegisterPolicy,
} from '../core/plan/plan-cutover.js';
export { planJobEvents } from '../core/plan/plan-jobs.js';
export {
  claimResult,
  completionResult,
  planClaim,
  planCompletion,
  planCompletions,
} from '../core/plan/plan-intents.js';
export { planCancel, planCancelPage } from '../core/plan/plan-scope-cancel.js';
export {
  planAcquire,
  planDeleteScope,
  planRelease,
  planRenew,
  planTakeover,
} from '../core/plan/plan-leases.js';
export {
  PlannedStore,
  type AuditPosition,
  type Plan,
  type PlanLimits,
  type PlannedOperation,
  type PlannedWrite,
  type WriteSettlement,
} from '../store/planned-store.js';
export {
  cutoverRecordOf,
  cutoverRowsPage,
  recordStateOf,
  scopeStateOf,
} from '../store/plan-rows.js';
export type { Store, StoreCapabilities } from '../store/store.js';
export { registerStoreKind, type StoreKind, type StoreOpener } from '../store/registry.js';
export type { OpenStoreOptions } from '../store/open.js';
export type { TransactionCapabilities } from '../core/transaction-limits.js';
export { UNBOUNDED_TRANSACTIONS } from '../core/transaction-limits.js';
export { FencegateError, isFencegateError, type ErrorCode } from '../errors.js';
export { MemoryStore, type MemoryStoreOptions } from '../store/memory/memory-store.js';
export { MemoryTables } from '../store/memory/memory-tables.js';
export { MemorySnapshot } from '../store/memory/memory-snapshot.js';
export { systemClock, type Clock } from '../core/clock.js';
// The optimistic engine (src/store/optimistic): what a compare-and-set store is written on.
export {
  CallState,
  OptimisticSnapshot,
  RangeMiss,
  type LoadedRange,
  type ReadKey,
  type StoreLayout,
} from '../store/optimistic/optimistic-snapshot.js';
export { KeyCache } from '../store/optimistic/key-cache.js';
export {
  answerOf,
  contention,
  MAX_ATTEMPTS,
  OptimisticEngine,
  type Planned as OptimisticPlanned,
} from '../store/optimistic/optimistic-engine.js';
export { BatchKeys } from '../store/optimistic/batch-keys.js';
export { FairQueue, type TenantJob } from '../store/optimistic/fair-queue.js';
export {
  BatchQueue,
  settle,
  type BatchQueueOptions,
  type QueuedJob,
} from '../store/optimistic/batch-queue.js';
export {
  forBatchMember,
  outcomeUnknown,
  storeUnavailable,
} from '../store/optimistic/store-errors.js';
