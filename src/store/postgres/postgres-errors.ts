/**
 * Driver errors into catalog codes. What matters is whether the statement may have taken effect:
 *
 * - connecting failed, or pg refused to send on a client it already knew was broken: nothing was
 *   sent, nothing changed: store_unavailable.
 * - the server answered with an error: the statement's transaction was rolled back. Serialization
 *   failures and deadlocks are retried by the adapter; resource and availability errors are
 *   store_unavailable; anything else is a fault of ours: internal_error.
 * - the connection broke while a statement was in flight (or the server reported a connection
 *   failure or shutdown): the transaction may or may not have committed. A mutation answers
 *   outcome_unknown; a read answers store_unavailable, since it changed nothing either way.
 *
 * Messages name the server as host:port/database, never the connection URL (it may carry a
 * password), and never a driver message that could quote it; of the server's own messages only
 * those that name why a connection was refused are quoted (CAUSE_NAMED_CODES).
 */
import { FencegateError } from '../../errors.js';
import {
  outcomeUnknown as unknownOutcome,
  storeUnavailable as unavailable,
} from '../optimistic/store-errors.js';

export type ErrorClass =
  /** The server rolled the statement back because of a concurrent transaction; run it again. */
  | 'retry'
  /** The statement was never sent. */
  | 'not_sent'
  /** The server refused or failed the statement without changing anything. */
  | 'unavailable'
  /** The statement may or may not have taken effect. */
  | 'in_doubt'
  /** A server error that points at a bug or a broken schema. */
  | 'internal';

interface ServerError {
  code: string;
  severity: string;
  message: string;
}

export function isServerError(error: unknown): error is ServerError {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as Partial<ServerError>;
  return typeof candidate.code === 'string' && typeof candidate.severity === 'string';
}

const RETRY_CODES = new Set(['40001', '40P01']);

/** A duplicate primary key: another transaction committed the row this one inserts. */
export function isUniqueViolation(error: unknown): boolean {
  return isServerError(error) && error.code === '23505';
}
/** The connection failed or the server is going away: the statement is in doubt. */
const IN_DOUBT_CODES = new Set(['57P01', '57P02', '57P05', '58030']);
/** Answered by the server, transaction rolled back, nothing changed. */
const UNAVAILABLE_CODES = new Set(['57P03', '57014', '55P03', '25006', '28000', '28P01', '3D000']);

export function classify(error: unknown): ErrorClass {
  if (isServerError(error)) {
    const { code } = error;
    if (RETRY_CODES.has(code)) return 'retry';
    if (code.startsWith('08') || IN_DOUBT_CODES.has(code)) return 'in_doubt';
    if (code.startsWith('53') || UNAVAILABLE_CODES.has(code)) return 'unavailable';
    return 'internal';
  }
  const message = error instanceof Error ? error.message : '';
  // pg answers these without writing anything to the socket.
  if (/not queryable|Client was closed/i.test(message)) return 'not_sent';
  return 'in_doubt';
}

/**
 * Refusals of a connection or a session whose server message names the cause an operator fixes
 * (`role "app" does not exist`, `database "x" does not exist`, `too many clients already`). These
 * messages quote names from the URL or the server's settings, never a password or stored data.
 */
const CAUSE_NAMED_CODES = new Set(['28000', '28P01', '3D000', '3F000', '42501', '53300', '57P03']);

/** A short, password-free reason: the SQLSTATE (with the server's words for a refused connection) or the system error code. */
export function reasonOf(error: unknown): string {
  if (isServerError(error)) {
    // 57014: the statement_timeout (statementTimeoutMillis) ran out, or an operator cancelled it.
    if (error.code === '57014') {
      return 'SQLSTATE 57014, statement cancelled: statementTimeoutMillis ran out or it was cancelled';
    }
    return CAUSE_NAMED_CODES.has(error.code)
      ? `${error.message} (SQLSTATE ${error.code})`
      : `SQLSTATE ${error.code}`;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) {
    const inner = (error.errors as unknown[]).map(reasonOf).filter((r) => r !== 'connection lost');
    if (inner.length > 0) return [...new Set(inner)].join(', ');
  }
  const message = error instanceof Error ? error.message : '';
  if (/timeout/i.test(message)) return 'timeout';
  if (/terminated/i.test(message)) return 'connection terminated';
  return 'connection lost';
}

export function storeUnavailable(target: string, cause: unknown): FencegateError {
  return unavailable(`the PostgreSQL store at ${target}`, reasonOf(cause), cause);
}

/** What went wrong, for an outcome_unknown answer. */
export function connectionFailed(target: string, cause: unknown): string {
  return `the connection to the PostgreSQL store at ${target} failed (${reasonOf(cause)})`;
}

export function outcomeUnknown(
  target: string,
  cause: unknown,
  operationId: string | undefined,
): FencegateError {
  return unknownOutcome(connectionFailed(target, cause), cause, operationId);
}

export function internalError(target: string, cause: unknown): FencegateError {
  return new FencegateError(
    'internal_error',
    `the PostgreSQL store at ${target} failed a statement (${reasonOf(cause)})`,
    {},
    { cause },
  );
}
