/**
 * The commit validation order of SEMANTICS.md as a pure function. An adapter that can run code
 * inside its transaction (SQLite, etcd's read-then-Txn) loads the current state, calls this, and
 * commits only when it returns null; the PostgreSQL adapter runs the same order in SQL and is held
 * to it by the conformance suite. The rejections and their messages are built in
 * refusal-messages.ts. Check 1 (operationId replay) is the adapter's: it needs the stored outcome,
 * not the scope.
 */
import type { AuditReadCheck, CommitRejection } from '../types.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import {
  knownRequestFingerprint,
  rememberRequestFingerprint,
  valueFingerprint,
} from './prepared-value.js';
import { commitRejection as reject } from './refusal-messages.js';
import type { NormalizedCommit } from './validate.js';

export interface ScopeSnapshot {
  fence: number;
  holder: string | null;
  leaseExpiresAt: number | null;
  policyVersion: string | null;
  status: 'active' | 'deleted';
}

export interface RecordSnapshot {
  exists: boolean;
  revision: number;
  incarnation: number;
}

export const NEVER_EXISTED: RecordSnapshot = { exists: false, revision: 0, incarnation: 0 };

export interface CommitCheckInput {
  request: NormalizedCommit;
  /** null when the scope was never created. */
  scope: ScopeSnapshot | null;
  now: number;
  /** Current state of a record (NEVER_EXISTED when absent). */
  record(scope: string, name: string): RecordSnapshot;
  /** Whether `revision` was a deletion of the record (asked only when a write is stale). */
  wasDeletedAt(scope: string, name: string, revision: number): boolean;
  effectKeyExists(effectKey: string): boolean;
}

/** The first failing check in SEMANTICS.md order (2 to 9), or null when the commit may apply. */
export function checkCommit(input: CommitCheckInput): CommitRejection | null {
  const { request, scope, now } = input;
  if (scope === null) return reject('scope_not_found', { scope: request.scope });
  if (scope.status === 'deleted') {
    return reject('scope_deleted', { scope: request.scope, currentFence: scope.fence });
  }
  if (request.fence !== scope.fence) return reject('stale_fence', { currentFence: scope.fence });
  if (scope.holder === null) {
    return reject('authority_revoked', { currentFence: scope.fence, holder: null });
  }
  if (scope.leaseExpiresAt !== null && scope.leaseExpiresAt <= now) {
    return reject('lease_expired', {
      currentFence: scope.fence,
      holder: scope.holder,
      leaseExpiresAt: scope.leaseExpiresAt,
    });
  }
  if (
    request.policyVersion !== undefined &&
    scope.policyVersion !== null &&
    request.policyVersion !== scope.policyVersion
  ) {
    return reject('stale_policy', {
      currentPolicyVersion: scope.policyVersion,
      currentFence: scope.fence,
    });
  }
  for (const read of request.reads) {
    const current = input.record(read.scope, read.name);
    if (current.revision !== read.revision) {
      return reject('stale_dependency', {
        scope: read.scope,
        name: read.name,
        expected: read.revision,
        actual: current.revision,
      });
    }
  }
  for (const write of request.writes) {
    const current = input.record(request.scope, write.name);
    const rejection = checkWrite(
      write.name,
      write.expectRevision,
      'delete' in write,
      current,
      (rev) => input.wasDeletedAt(request.scope, write.name, rev),
    );
    if (rejection !== null) return rejection;
  }
  for (const intent of request.intents) {
    if (input.effectKeyExists(intent.effectKey)) {
      return reject('duplicate_effect', { effectKey: intent.effectKey });
    }
  }
  return null;
}

/**
 * Check 8 for one write. A read of absence (revision 0, or a deletion) saw no lifetime, so any
 * change since is stale_revision; a read of a live revision whose lifetime has ended since
 * (deleted, or deleted and re-created) is incarnation_changed.
 */
export function checkWrite(
  name: string,
  expected: number,
  isDelete: boolean,
  current: RecordSnapshot,
  wasDeletedAt: (revision: number) => boolean,
): CommitRejection | null {
  const details = { name, expected, actual: current.revision, exists: current.exists };
  if (expected === current.revision) {
    // The message says there is nothing to delete: details with expected === actual, !exists.
    return isDelete && !current.exists ? reject('stale_revision', details) : null;
  }
  if (lifetimeEnded(expected, current, wasDeletedAt)) {
    return reject('incarnation_changed', { ...details, incarnation: current.incarnation });
  }
  return reject('stale_revision', details);
}

function lifetimeEnded(
  expected: number,
  current: RecordSnapshot,
  wasDeletedAt: (revision: number) => boolean,
): boolean {
  if (expected === 0 || expected > current.revision || wasDeletedAt(expected)) return false;
  // `expected` was a live revision: its lifetime ended unless it is the current one.
  return !current.exists || expected < current.incarnation;
}

/**
 * The request fingerprint stored with an operation's outcome: the same operationId with another
 * request is operation_id_conflict, with the same request a replay. Taken once, at validation.
 */
export function requestFingerprint(request: NormalizedCommit): string {
  const known = knownRequestFingerprint(request);
  if (known !== undefined) return known;
  const { operationId: _operationId, writes, ...rest } = request;
  // Values enter through their fingerprints, so each value is canonicalized once per request.
  const writeKeys = writes.map((write) =>
    'delete' in write
      ? write
      : { name: write.name, expectRevision: write.expectRevision, value: valueFingerprint(write) },
  );
  const hash = sha256Hex(canonicalJson({ ...rest, writes: writeKeys }));
  rememberRequestFingerprint(request, hash);
  return hash;
}

/** A commit's dependencies with the revisions they had at the check, or null for none (audit). */
export function auditReads(
  request: NormalizedCommit,
  record: (scope: string, name: string) => RecordSnapshot,
): AuditReadCheck[] | null {
  if (request.reads.length === 0) return null;
  return request.reads.map((read) => ({
    scope: read.scope,
    name: read.name,
    expected: read.revision,
    actual: record(read.scope, read.name).revision,
  }));
}
