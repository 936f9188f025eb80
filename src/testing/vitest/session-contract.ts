/**
 * validateSession: registers the session clauses (session-clauses.ts) as a vitest suite, one
 * case per clause, for any OpenAI Agents SDK session, in the style of validateWriteOwnership.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  SESSION_CLAUSES,
  type SessionClause,
  type SessionContractSubject,
} from './session-clauses.js';

export interface SessionTestInitializer<T extends SessionContractSubject> {
  /** Names the suite in test output. */
  sessionName: string;
  /** Once before the cases (start a store, a server…). */
  beforeAll?(): void | Promise<void>;
  /** Default 10,000 ms. */
  beforeAllTimeout?: number;
  /** Once after the cases. */
  afterAll?(): void | Promise<void>;
  /** What every case opens its sessions through. */
  createSubject(): T | Promise<T>;
  /** After the cases: close it, check what it wrote. */
  destroySubject?(subject: T): void | Promise<void>;
  /**
   * Clauses this session is known to fail, as measured: each passes only while it still fails,
   * so the suite states the session's result and notices the day a clause starts to hold.
   */
  expectedFailures?: readonly SessionClause[];
}

export function validateSession<T extends SessionContractSubject>(
  initializer: SessionTestInitializer<T>,
): void {
  const expectedFailures = new Set(initializer.expectedFailures ?? []);
  describe(`${initializer.sessionName}: session contract`, () => {
    let subject: T | undefined;
    beforeAll(async () => {
      await initializer.beforeAll?.();
      subject = await initializer.createSubject();
    }, initializer.beforeAllTimeout ?? 10_000);
    afterAll(async () => {
      if (subject !== undefined) await initializer.destroySubject?.(subject);
      await initializer.afterAll?.();
    });
    for (const [name, clause] of Object.entries(SESSION_CLAUSES)) {
      const register = expectedFailures.has(name as SessionClause) ? it.fails : it;
      register(name, async () => {
        if (subject === undefined) throw new Error('createSubject did not run');
        await clause(subject);
      });
    }
  });
}
