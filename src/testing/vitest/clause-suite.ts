/**
 * One vitest suite of clauses: a subject made once before the cases, one case per clause, and the
 * clauses a subject is known to fail registered so that they pass only while they still fail.
 * validateWriteOwnership and validateMemoryStore are each this with their own clauses.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';

/** What a suite's initializer may run around its cases. */
export interface SuiteHooks {
  /** Once before the cases (start a store, a server…). */
  beforeAll?(): void | Promise<void>;
  /** Default 10,000 ms. */
  beforeAllTimeout?: number;
  /** Once after the cases. */
  afterAll?(): void | Promise<void>;
}

export interface ClauseSuite<S, C extends string> extends SuiteHooks {
  title: string;
  clauses: Record<C, (subject: S) => Promise<void>>;
  create(): S | Promise<S>;
  destroy?(subject: S): void | Promise<void>;
  expectedFailures?: readonly C[];
}

export function registerClauseSuite<S, C extends string>(suite: ClauseSuite<S, C>): void {
  const expectedFailures = new Set<string>(suite.expectedFailures ?? []);
  describe(suite.title, () => {
    let subject: S | undefined;
    beforeAll(async () => {
      await suite.beforeAll?.();
      subject = await suite.create();
    }, suite.beforeAllTimeout ?? 10_000);
    afterAll(async () => {
      if (subject !== undefined) await suite.destroy?.(subject);
      await suite.afterAll?.();
    });
    for (const [name, clause] of Object.entries<(subject: S) => Promise<void>>(suite.clauses)) {
      const register = expectedFailures.has(name) ? it.fails : it;
      register(name, async () => {
        if (subject === undefined) throw new Error('the subject was not created');
        await clause(subject);
      });
    }
  });
}
