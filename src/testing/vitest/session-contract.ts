/**
 * validateSession: registers the session clauses (session-clauses.ts) as a vitest suite, one
 * case per clause, for any OpenAI Agents SDK session, in the style of validateWriteOwnership.
 */
import { registerClauseSuite, type SuiteHooks } from './clause-suite.js';
import {
  SESSION_CLAUSES,
  type SessionClause,
  type SessionContractSubject,
} from './session-clauses.js';

export interface SessionTestInitializer<T extends SessionContractSubject> extends SuiteHooks {
  /** Names the suite in test output. */
  sessionName: string;
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
  registerClauseSuite<T, SessionClause>({
    ...initializer,
    title: `${initializer.sessionName}: session contract`,
    clauses: SESSION_CLAUSES,
    create: () => initializer.createSubject(),
    destroy: (subject) => initializer.destroySubject?.(subject),
  });
}
