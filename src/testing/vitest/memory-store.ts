/**
 * validateMemoryStore: registers the memory-store clauses (memory-store-clauses.ts) as a vitest
 * suite, one case per clause, for any LangGraph long-term memory store, in the shape of
 * validateWriteOwnership.
 */
import { registerClauseSuite, type SuiteHooks } from './clause-suite.js';
import {
  MEMORY_STORE_CLAUSES,
  type MemoryStoreClause,
  type MemoryStoreSubject,
} from './memory-store-clauses.js';

export interface MemoryStoreTestInitializer<T extends MemoryStoreSubject> extends SuiteHooks {
  /** Names the suite in test output. */
  storeName: string;
  /** What every case runs threads through. */
  createSubject(): T | Promise<T>;
  /** After the cases: close it, check what it wrote. */
  destroySubject?(subject: T): void | Promise<void>;
  /** Clauses this store is known to fail, as measured: each passes only while it still fails. */
  expectedFailures?: readonly MemoryStoreClause[];
}

export function validateMemoryStore<T extends MemoryStoreSubject>(
  initializer: MemoryStoreTestInitializer<T>,
): void {
  registerClauseSuite<T, MemoryStoreClause>({
    ...initializer,
    title: `${initializer.storeName}: memory store`,
    clauses: MEMORY_STORE_CLAUSES,
    create: () => initializer.createSubject(),
    destroy: (subject) => initializer.destroySubject?.(subject),
  });
}
