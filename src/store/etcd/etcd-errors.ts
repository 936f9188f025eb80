/**
 * Client errors into catalog codes. What matters is whether a Txn may have applied:
 *
 * - the call never left (every member's circuit is open, the client is closed, no connection could
 *   be made) or etcd refused it before proposing (no leader): nothing changed: store_unavailable;
 * - etcd refused the request's size or operation count: the request cannot fit: invalid_request;
 * - anything else after sending (deadline passed, connection lost, leader changed while waiting):
 *   a write may or may not have applied: outcome_unknown; a read changed nothing: store_unavailable.
 *
 * Messages name the members as host:port only.
 */
import { FencegateError } from '../../errors.js';

export type EtcdErrorClass = 'not_sent' | 'too_large' | 'in_doubt';

const NOT_SENT = [
  /no leader/i,
  /breaker is open|circuit/i,
  /No connection established/i,
  /failed to connect|connect ECONNREFUSED|ECONNREFUSED/i,
  /already closed/i,
  /no hosts/i,
];

const TOO_LARGE = [
  /request is too large/i,
  /too many operations in txn/i,
  /message larger than max/i,
];

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name} ${error.message}` : String(error);
}

export function classifyEtcdError(error: unknown): EtcdErrorClass {
  const message = messageOf(error);
  if (TOO_LARGE.some((pattern) => pattern.test(message))) return 'too_large';
  if (NOT_SENT.some((pattern) => pattern.test(message))) return 'not_sent';
  return 'in_doubt';
}

/** A short reason without addresses or credentials. */
function reasonOf(error: unknown): string {
  const message = messageOf(error);
  if (/deadline/i.test(message)) return 'deadline exceeded';
  if (/no leader/i.test(message)) return 'no leader';
  if (/leader changed/i.test(message)) return 'leader changed';
  if (/request timed out/i.test(message)) return 'request timed out';
  if (/breaker|circuit/i.test(message)) return 'every member failed recently';
  if (/ECONNREFUSED|connect|No connection/i.test(message)) return 'connection refused';
  return 'connection lost';
}

export function storeUnavailable(target: string, cause: unknown): FencegateError {
  return new FencegateError(
    'store_unavailable',
    `the etcd store at ${target} is unavailable (${reasonOf(cause)}); nothing was changed`,
    {},
    { cause },
  );
}

export function outcomeUnknown(
  target: string,
  cause: unknown,
  operationId: string | undefined,
): FencegateError {
  const what =
    operationId === undefined
      ? 'the operation was sent; read the scope to learn whether it applied'
      : `the commit was sent; read getOperation(${operationId}) for the outcome`;
  return new FencegateError(
    'outcome_unknown',
    `the etcd store at ${target} did not answer in time (${reasonOf(cause)}) after ${what}`,
    operationId === undefined ? {} : { operationId },
    { cause },
  );
}

export function tooLarge(detail: string): FencegateError {
  return new FencegateError(
    'invalid_request',
    `this request does not fit in one etcd transaction: ${detail}; split it into smaller requests`,
  );
}
