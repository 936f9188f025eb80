/**
 * What the dispatch and cutover modules need from the PostgreSQL store: its schema, the time to
 * pass to each function (or null for the database clock), one function call, one read.
 */
import { createHash } from 'node:crypto';
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

/** PostgreSQL keeps this many bytes of an identifier, a prepared statement's name included. */
const NAME_BYTES = 63;

/**
 * A prepared statement's name: per kind and schema (a connection may serve two schemas). Where the
 * schema's name would make it longer than PostgreSQL keeps, and so cut it silently, a digest of
 * the schema's name stands in for it.
 */
export function statementName(kind: string, schema: string): string {
  const name = `fencegate_${kind}_${schema}`;
  if (Buffer.byteLength(name) <= NAME_BYTES) return name;
  return `fencegate_${kind}_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
}
