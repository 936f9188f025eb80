/**
 * validateWriteOwnership: registers the write-ownership clauses (write-ownership-clauses.ts) as a
 * vitest suite, one case per clause, for any checkpointer that can claim a thread. Its shape
 * follows `validate()` of @langchain/langgraph-checkpoint-validation, so a checkpointer's author
 * runs both with the same initializer.
 */
import { hooksOf, registerClauseSuite } from './clause-suite.js';
import {
  WRITE_OWNERSHIP_CLAUSES,
  type WriteOwnershipCheckpointer,
  type WriteOwnershipClause,
} from './write-ownership-clauses.js';

export interface WriteOwnershipTestInitializer<T extends WriteOwnershipCheckpointer> {
  /** Names the suite in test output. */
  checkpointerName: string;
  /** Once before the cases (start a store, a server…). */
  beforeAll?(): void | Promise<void>;
  /** Default 10,000 ms. */
  beforeAllTimeout?: number;
  /** Once after the cases. */
  afterAll?(): void | Promise<void>;
  /** The checkpointer every case claims threads of and reads through. */
  createCheckpointer(): T | Promise<T>;
  /** After the cases: close it, check what it wrote. */
  destroyCheckpointer?(checkpointer: T): void | Promise<void>;
  /**
   * Clauses this checkpointer is known to fail, as measured. Each is registered so that it passes
   * only while the clause still fails: the suite states the checkpointer's result, and notices
   * the day a clause starts to hold.
   */
  expectedFailures?: readonly WriteOwnershipClause[];
}

export function validateWriteOwnership<T extends WriteOwnershipCheckpointer>(
  initializer: WriteOwnershipTestInitializer<T>,
): void {
  registerClauseSuite<T>({
    title: `${initializer.checkpointerName}: write ownership`,
    clauses: WRITE_OWNERSHIP_CLAUSES,
    expectedFailures: initializer.expectedFailures ?? [],
    create: () => initializer.createCheckpointer(),
    createName: 'createCheckpointer',
    ...(initializer.destroyCheckpointer === undefined
      ? {}
      : { destroy: (saver: T) => initializer.destroyCheckpointer?.(saver) }),
    ...hooksOf(initializer),
  });
}
