/**
 * What the dispatch and cutover modules need from the PostgreSQL store: its schema, the time to
 * pass to each function (or null for the database clock), one function call, one read.
 */
import type { StatementKind } from './postgres-connection.js';

export interface PostgresCalls {
  readonly schema: string;
  /** The injected clock's time, or null to let each statement read the database clock. */
  now(): number | null;
  /** One statement whose single row has the column `answer` (a function call); its value. */
  call<T>(kind: StatementKind, name: string, text: string, values: unknown[]): Promise<T>;
  /** The rows of one read, as a named prepared statement when `name` is given. */
  rows<R extends object>(text: string, values: unknown[], name?: string): Promise<R[]>;
}

export const READ: StatementKind = { mutation: false };
export const MUTATION: StatementKind = { mutation: true };
