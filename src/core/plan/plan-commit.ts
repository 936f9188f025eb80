/**
 * The commit boundary planned over a snapshot: the replay check, the check order of
 * commit-check.ts, then the records, tombstones, intents, stored outcome and audit entries.
 */
import type {
  AuditRecordChange,
  CommitCommitted,
  CommitRejected,
  CommitResult,
  CommittedRecord,
} from '../../types.js';
import {
  ABANDONED_FINGERPRINT,
  abandonedAuditEntry,
  abandonedOutcome,
  storedOutcomeAnswers,
} from '../abandon.js';
import { auditEntry, type NewAuditEntry } from '../audit-entry.js';
import { claimAtCommitOf, createdIntentAudit, createdIntents } from '../claim-at-commit.js';
import {
  auditReads,
  checkCommit,
  NEVER_EXISTED,
  requestFingerprint,
  type RecordSnapshot,
} from '../commit-check.js';
import { holderOfFence } from '../fence-holder.js';
import { tokenField, type Caller } from '../grant-token.js';
import { grantRefusal } from '../lease-rules.js';
import { valueFingerprint, valueJson } from '../prepared-value.js';
import { commitRejection, operationIdConflict, refusalError } from '../refusal-messages.js';
import type { NormalizedCommit } from '../validate.js';
import { tombstone, withRelease } from './plan-leases.js';
import {
  refKey,
  type Put,
  type Ref,
  type ScopeRow,
  type Snapshot,
  type Transition,
} from './transition.js';

/**
 * The rows every commit reads. The grant of the presented fence is read (and expected) only when
 * the scope row cannot name its holder (holderOfFence), so a current holder's commit compares one
 * key fewer.
 */
export function commitRefs(request: NormalizedCommit): Ref[] {
  const refs: Ref[] = [
    { type: 'operation', operationId: request.operationId },
    { type: 'scope', scope: request.scope },
  ];
  for (const read of request.reads)
    refs.push({ type: 'record', scope: read.scope, name: read.name });
  for (const write of request.writes)
    refs.push({ type: 'record', scope: request.scope, name: write.name });
  for (const intent of request.intents) refs.push({ type: 'intent', effectKey: intent.effectKey });
  return dedupeRefs(refs);
}

function dedupeRefs(refs: Ref[]): Ref[] {
  const seen = new Set<string>();
  return refs.filter((ref) => {
    const key = refKey(ref);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function planCommit(
  snapshot: Snapshot,
  request: NormalizedCommit,
  caller?: Caller,
): Transition<CommitResult> {
  const { tenant, now } = snapshot;
  const requestHash = requestFingerprint(request);
  const operationRef: Ref = { type: 'operation', operationId: request.operationId };
  const stored = snapshot.get({ type: 'operation', operationId: request.operationId });
  if (stored !== null) {
    if (storedOutcomeAnswers(stored.requestFingerprint, requestHash)) {
      return {
        expect: [operationRef],
        put: [],
        audit: [],
        answer: { ok: true, value: { ...stored.outcome, replayed: true } },
      };
    }
    return {
      expect: [operationRef],
      put: [],
      audit: [
        rejectedCommitEntry(snapshot, request, 'operation_id_conflict', {
          fence: request.fence,
          ...tokenField(caller),
        }),
      ],
      answer: {
        ok: false,
        error: refusalError(operationIdConflict(request.operationId)),
      },
    };
  }

  const scopeRow = snapshot.get({ type: 'scope', scope: request.scope });
  if (scopeRow !== null && isPermanentlyStale(request, scopeRow)) {
    return planFenceBelow(snapshot, request, scopeRow, requestHash, caller);
  }
  const expect: Ref[] = commitRefs(request);
  // The checks, the audit and the writes each read a record: load it once.
  const records = new Map<string, RecordSnapshot>();
  const record = (scope: string, name: string): RecordSnapshot => {
    const key = `${scope}\0${name}`;
    let row = records.get(key);
    if (row === undefined) {
      row = snapshot.get({ type: 'record', scope, name }) ?? NEVER_EXISTED;
      records.set(key, row);
    }
    return row;
  };
  const rejection = checkCommit({
    request,
    scope: scopeRow,
    now,
    record,
    wasDeletedAt: (scope, name, revision) => {
      const ref: Ref = { type: 'deletion', scope, name, revision };
      expect.push(ref);
      return snapshot.get(ref) !== null;
    },
    effectKeyExists: (effectKey) => snapshot.get({ type: 'intent', effectKey }) !== null,
  });

  const base = {
    at: now,
    tenant,
    scope: request.scope,
    kind: 'commit' as const,
    operationId: request.operationId,
    taskId: request.taskId ?? null,
    policyVersion: request.policyVersion ?? scopeRow?.policyVersion ?? null,
    holder: holderOfFence(scopeRow, request.fence, (fence) => {
      const ref: Ref = { type: 'fenceGrant', scope: request.scope, fence };
      expect.push(ref);
      return snapshot.get(ref);
    }),
    fence: request.fence,
    currentFence: scopeRow?.fence ?? null,
    leaseExpiresAt: scopeRow?.leaseExpiresAt ?? null,
    reads: auditReads(request, record),
    ...tokenField(caller),
  };

  if (rejection !== null) {
    const result: CommitRejected = {
      outcome: 'rejected',
      operationId: request.operationId,
      replayed: false,
      error: rejection,
    };
    const records: AuditRecordChange[] = request.writes.map((write) => ({
      name: write.name,
      expected: write.expectRevision,
      actual: record(request.scope, write.name).revision,
      resulting: null,
      fingerprint: null,
      deleted: 'delete' in write,
    }));
    return {
      expect,
      put: [
        { ...operationRef, row: { requestFingerprint: requestHash, outcome: result, at: now } },
      ],
      audit: [auditEntry({ ...base, outcome: 'rejected', reason: rejection.code, records })],
      answer: { ok: true, value: result },
    };
  }

  // The fence admits a commit; ending the lease with it is a release, open only to whom the
  // grant's release is (core/grant-token.ts): refused, nothing of the commit is stored.
  const releaseRefused =
    request.release === true && scopeRow !== null
      ? grantRefusal(request.scope, scopeRow, caller)
      : null;
  if (releaseRefused !== null) {
    return {
      expect,
      put: [],
      audit: [auditEntry({ ...base, outcome: 'rejected', reason: releaseRefused.code })],
      answer: { ok: false, error: releaseRefused },
    };
  }

  const put: Put[] = [];
  const committedRecords: CommittedRecord[] = [];
  const auditRecords: AuditRecordChange[] = [];
  for (const write of request.writes) {
    const current = record(request.scope, write.name);
    const revision = current.revision + 1;
    const deleted = 'delete' in write;
    let incarnation = current.incarnation;
    let fingerprint: string | null = null;
    if (deleted) {
      put.push(...tombstone(snapshot, request.scope, write.name, current, revision));
    } else {
      // A write to an absent record starts a new lifetime at this revision.
      incarnation = current.exists ? current.incarnation : revision;
      fingerprint = valueFingerprint(write);
      put.push({
        type: 'record',
        scope: request.scope,
        name: write.name,
        row: {
          exists: true,
          valueJson: valueJson(write),
          revision,
          incarnation,
          fingerprint,
          updatedAt: now,
        },
      });
    }
    committedRecords.push({ name: write.name, revision, incarnation, fingerprint });
    auditRecords.push({
      name: write.name,
      expected: write.expectRevision,
      actual: current.revision,
      resulting: revision,
      fingerprint,
      deleted,
    });
  }
  // Created pending, or already claimed by a dispatcher of the committing process (claim-at-commit.ts).
  const intents = createdIntents(request, now, claimAtCommitOf(request));
  for (const intent of intents) {
    put.push({ type: 'intent', effectKey: intent.effectKey, row: intent });
  }
  const result: CommitCommitted = {
    outcome: 'committed',
    operationId: request.operationId,
    scope: request.scope,
    fence: request.fence,
    records: committedRecords,
    intents: intents.map((intent) => ({ effectKey: intent.effectKey, status: intent.status })),
    replayed: false,
  };
  put.push({ ...operationRef, row: { requestFingerprint: requestHash, outcome: result, at: now } });
  const committed: Transition<CommitResult> = {
    expect,
    put,
    audit: [
      auditEntry({ ...base, outcome: 'committed', records: auditRecords }),
      ...createdIntentAudit(tenant, request, intents, now),
    ],
    answer: { ok: true, value: result },
  };
  // A commit that passed the checks holds the scope's live lease at its fence: it may release it.
  return request.release === true && scopeRow !== null
    ? withRelease(snapshot, committed, scopeRow, request, caller)
    : committed;
}

/** A fence below the active scope's current one: refused now and forever, fences only grow. */
function isPermanentlyStale(request: NormalizedCommit, scope: ScopeRow): boolean {
  return scope.status === 'active' && request.fence < scope.fence;
}

/**
 * The refusal of a fence below the scope's current one (docs/semantics.md, "Refusals that cost
 * little"). It is decided by the scope row alone, so it reads and expects nothing else: no record
 * the commit names, no dependency. Its audit entry names the fence, the current fence and the
 * holder the fence was granted to, without the revisions the commit expected (a worker without
 * authority decided nothing by them). Like every refusal it is stored under its operationId, so a
 * replay answers this refusal again and is audited once.
 */
function planFenceBelow(
  snapshot: Snapshot,
  request: NormalizedCommit,
  scopeRow: ScopeRow,
  requestHash: string,
  caller: Caller | undefined,
): Transition<CommitResult> {
  const { now } = snapshot;
  const operationRef: Ref = { type: 'operation', operationId: request.operationId };
  const expect: Ref[] = [operationRef, { type: 'scope', scope: request.scope }];
  const result: CommitRejected = {
    outcome: 'rejected',
    operationId: request.operationId,
    replayed: false,
    error: commitRejection('stale_fence', { currentFence: scopeRow.fence }),
  };
  const holder = holderOfFence(scopeRow, request.fence, (fence) => {
    const ref: Ref = { type: 'fenceGrant', scope: request.scope, fence };
    expect.push(ref);
    return snapshot.get(ref);
  });
  return {
    expect,
    put: [{ ...operationRef, row: { requestFingerprint: requestHash, outcome: result, at: now } }],
    audit: [
      rejectedCommitEntry(snapshot, request, 'stale_fence', {
        policyVersion: request.policyVersion ?? scopeRow.policyVersion ?? null,
        holder,
        fence: request.fence,
        currentFence: scopeRow.fence,
        leaseExpiresAt: scopeRow.leaseExpiresAt,
        ...tokenField(caller),
      }),
    ],
    answer: { ok: true, value: result },
  };
}

/** The audit entry of a commit refused before its checks ran, with the fields it names. */
function rejectedCommitEntry(
  snapshot: Snapshot,
  request: NormalizedCommit,
  reason: string,
  fields: Partial<NewAuditEntry>,
): NewAuditEntry {
  return auditEntry({
    at: snapshot.now,
    tenant: snapshot.tenant,
    scope: request.scope,
    kind: 'commit',
    outcome: 'rejected',
    reason,
    operationId: request.operationId,
    taskId: request.taskId ?? null,
    ...fields,
  });
}

/**
 * Settles an operationId (core/abandon.ts): its stored outcome when there is one, otherwise the
 * stored and audited abandonment. Expecting the operation row absent makes a commit in flight with
 * this operationId lose to it, or win and be answered.
 */
export function planAbandon(
  snapshot: Snapshot,
  operationId: string,
  reason: string | undefined,
  caller?: Caller,
): Transition<CommitResult> {
  const operationRef: Ref = { type: 'operation', operationId };
  const stored = snapshot.get({ type: 'operation', operationId });
  if (stored !== null) {
    return {
      expect: [operationRef],
      put: [],
      audit: [],
      answer: { ok: true, value: stored.outcome },
    };
  }
  const result = abandonedOutcome(operationId, reason);
  const { tenant, now } = snapshot;
  return {
    expect: [operationRef],
    put: [
      {
        ...operationRef,
        row: { requestFingerprint: ABANDONED_FINGERPRINT, outcome: result, at: now },
      },
    ],
    audit: [abandonedAuditEntry(tenant, now, operationId, caller)],
    answer: { ok: true, value: result },
  };
}
