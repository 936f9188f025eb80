/**
 * Registers a set of clauses as one vitest suite, one case per clause, around one subject the
 * suite creates once: what validateWriteOwnership and validateSession share. Clauses listed as
 * expected failures are registered with `it.fails`, so each passes only while it still fails.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';

export interface ClauseSuite<T> {
  title: string;
  clauses: Record<string, (subject: T) => Promise<void>>;
  expectedFailures: readonly string[];
  beforeAll?(): void | Promise<void>;
  beforeAllTimeout?: number;
  afterAll?(): void | Promise<void>;
  create(): T | Promise<T>;
  destroy?(subject: T): void | Promise<void>;
  /** Names the creating hook in the error a case throws when it did not run. */
  createName: string;
}

export function registerClauseSuite<T>(suite: ClauseSuite<T>): void {
  const expectedFailures = new Set(suite.expectedFailures);
  describe(suite.title, () => {
    let subject: T | undefined;
    beforeAll(async () => {
      await suite.beforeAll?.();
      subject = await suite.create();
    }, suite.beforeAllTimeout ?? 10_000);
    afterAll(async () => {
      if (subject !== undefined) await suite.destroy?.(subject);
      await suite.afterAll?.();
    });
    for (const [name, clause] of Object.entries(suite.clauses)) {
      const register = expectedFailures.has(name) ? it.fails : it;
      register(name, async () => {
        if (subject === undefined) throw new Error(`${suite.createName} did not run`);
        await clause(subject);
      });
    }
  });
}

/** The suite-wide hooks of an initializer, as the clause suite takes them. */
export function hooksOf(initializer: {
  beforeAll?(): void | Promise<void>;
  beforeAllTimeout?: number;
  afterAll?(): void | Promise<void>;
}): Pick<ClauseSuite<unknown>, 'beforeAll' | 'beforeAllTimeout' | 'afterAll'> {
  return {
    ...(initializer.beforeAll === undefined ? {} : { beforeAll: () => initializer.beforeAll?.() }),
    ...(initializer.beforeAllTimeout === undefined
      ? {}
      : { beforeAllTimeout: initializer.beforeAllTimeout }),
    ...(initializer.afterAll === undefined ? {} : { afterAll: () => initializer.afterAll?.() }),
  };
}
