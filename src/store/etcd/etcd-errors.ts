/**
 * Client errors into catalog codes. What matters is whether a Txn may have applied, following
 * etcd 3.4's gRPC error semantics:
 *
 * - refused before it was proposed, so nothing changed (`not_sent`): no connection could be made,
 *   every member's circuit is open, the client is closed, the call's deadline passed while it was
 *   still waiting for a connection (grpc-js names no `remote_addr` then); etcd answered
 *   `no leader` (the member has no leader and the call asked for one: `hasleader` metadata),
 *   `raft proposal dropped` (a follower without a leader drops the proposal before it enters any
 *   log), `not capable`, `too many requests` (the apply backlog check, before proposing), or
 *   `rpc not supported for learner`;
 * - etcd refused the request's size or operation count (`too_large`): invalid_request;
 * - anything else after the request reached a member (`in_doubt`): its deadline passed, the
 *   connection was lost, `request timed out` (possibly due to leader failure or connection loss),
 *   `leader changed`, `server stopped`: the proposal may be in the raft log and commit later, so a
 *   write may or may not have applied; a read changed nothing either way.
 *
 * Messages name the members as host:port only.
 */
import { FencegateError } from '../../errors.js';
import {
  outcomeUnknown as unknownOutcome,
  storeUnavailable as unavailable,
} from '../optimistic/store-errors.js';

export type EtcdErrorClass = 'not_sent' | 'too_large' | 'in_doubt';

const NOT_SENT = [
  /etcdserver: no leader/i,
  /raft proposal dropped/i,
  /etcdserver: not capable/i,
  /etcdserver: too many requests/i,
  /not supported for learner/i,
  /breaker is open|circuit/i,
  /No connection established/i,
  /failed to connect|connect ECONNREFUSED|ECONNREFUSED/i,
  /already closed/i,
  /no hosts/i,
];

/** A grpc-js deadline names the peer once the call was handed to a connection. */
function expiredBeforeSending(message: string): boolean {
  return (
    /Deadline exceeded after/i.test(message) &&
    !/remote_addr=/i.test(message) &&
    !/previous attempts/i.test(message)
  );
}

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
  if (expiredBeforeSending(message)) return 'not_sent';
  return 'in_doubt';
}

const WEIGHT: Record<EtcdErrorClass, number> = { not_sent: 0, in_doubt: 1, too_large: 2 };

/**
 * Of two errors of attempts at the same request, the one that says more: a request that may have
 * been applied by one attempt stays in doubt whatever later attempts answer.
 */
export function graverError(first: unknown, second: unknown): unknown {
  if (first === undefined) return second;
  return WEIGHT[classifyEtcdError(first)] > WEIGHT[classifyEtcdError(second)] ? first : second;
}

/** A short reason without addresses or credentials. */
function reasonOf(error: unknown): string {
  const message = messageOf(error);
  if (expiredBeforeSending(message)) return 'no member could be reached';
  if (/deadline/i.test(message)) return 'deadline exceeded';
  if (/no leader|proposal dropped/i.test(message)) return 'no leader';
  if (/leader changed/i.test(message)) return 'leader changed';
  if (/request timed out/i.test(message)) return 'request timed out';
  if (/breaker|circuit/i.test(message)) return 'every member failed recently';
  if (/ECONNREFUSED|connect|No connection/i.test(message)) return 'connection refused';
  return 'connection lost';
}

export function storeUnavailable(target: string, cause: unknown): FencegateError {
  return unavailable(`the etcd store at ${target}`, reasonOf(cause), cause);
}

/** What went wrong, for an outcome_unknown answer. */
export function unanswered(target: string, cause: unknown): string {
  return `the etcd store at ${target} did not answer in time (${reasonOf(cause)})`;
}

export function outcomeUnknown(
  target: string,
  cause: unknown,
  operationId: string | undefined,
): FencegateError {
  return unknownOutcome(unanswered(target, cause), cause, operationId);
}

export function tooLarge(detail: string): FencegateError {
  return new FencegateError(
    'invalid_request',
    `this request does not fit in one etcd transaction: ${detail}; split it into smaller requests`,
  );
}
