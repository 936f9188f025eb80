/** Row shapes of the SQLite tables and their mapping to the public types. */
import type { RecordSnapshot, ScopeSnapshot } from '../../core/commit-check.js';
import type {
  AuditEntry,
  AuditKind,
  AuditOutcome,
  AuditRecordChange,
  Intent,
  IntentStatus,
  RecordState,
  ScopeState,
  TokenRecord,
  TokenRole,
} from '../../types.js';

export interface ScopeRow {
  scope: string;
  fence: number;
  holder: string | null;
  lease_expires_at: number | null;
  policy_version: string | null;
  status: 'active' | 'deleted';
  updated_at: number;
}

export interface RecordRow {
  name: string;
  present: number;
  value: string | null;
  revision: number;
  incarnation: number;
  fingerprint: string | null;
  updated_at: number;
}

export interface IntentRow {
  effect_key: string;
  scope: string;
  target: string;
  payload: string;
  status: IntentStatus;
  attempts: number;
  fence: number;
  operation_id: string;
  claim_fence: number;
  provider_ref: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  unknown_outcomes: number;
  claimed_by: string | null;
  claim_expires_at: number | null;
  next_attempt_at: number | null;
}

/** The intent columns toIntent reads, for SELECT lists. */
export const INTENT_COLUMNS = `effect_key, scope, target, payload, status, attempts, fence, operation_id,
  claim_fence, provider_ref, last_error, created_at, updated_at, unknown_outcomes, claimed_by,
  claim_expires_at, next_attempt_at`;

export interface AuditRow {
  seq: number;
  at: number;
  tenant: string;
  scope: string | null;
  kind: AuditKind;
  outcome: AuditOutcome;
  reason: string | null;
  task_id: string | null;
  operation_id: string | null;
  holder: string | null;
  policy_version: string | null;
  fence: number | null;
  current_fence: number | null;
  lease_expires_at: number | null;
  records: string | null;
  effect_key: string | null;
}

export interface TokenRow {
  id: string;
  tenant: string;
  role: string;
  label: string | null;
  hash: string;
  created_at: number;
}

export function scopeSnapshot(row: ScopeRow | undefined): ScopeSnapshot | null {
  if (row === undefined) return null;
  return {
    fence: row.fence,
    holder: row.holder,
    leaseExpiresAt: row.lease_expires_at,
    policyVersion: row.policy_version,
    status: row.status,
  };
}

export function toScopeState(row: ScopeRow): ScopeState {
  return {
    scope: row.scope,
    fence: row.fence,
    holder: row.holder,
    leaseExpiresAt: row.lease_expires_at,
    policyVersion: row.policy_version,
    status: row.status,
    updatedAt: row.updated_at,
  };
}

export function recordSnapshot(
  row: Pick<RecordRow, 'present' | 'revision' | 'incarnation'> | undefined,
): RecordSnapshot {
  if (row === undefined) return { exists: false, revision: 0, incarnation: 0 };
  return { exists: row.present === 1, revision: row.revision, incarnation: row.incarnation };
}

export function toRecordState(
  scope: string,
  name: string,
  row: RecordRow | undefined,
): RecordState {
  if (row === undefined) {
    return {
      scope,
      name,
      exists: false,
      value: null,
      revision: 0,
      incarnation: 0,
      fingerprint: null,
      updatedAt: null,
    };
  }
  const exists = row.present === 1;
  return {
    scope,
    name,
    exists,
    value: exists && row.value !== null ? (JSON.parse(row.value) as unknown) : null,
    revision: row.revision,
    incarnation: row.incarnation,
    fingerprint: exists ? row.fingerprint : null,
    updatedAt: row.updated_at,
  };
}

export function toIntent(row: IntentRow): Intent {
  return {
    effectKey: row.effect_key,
    scope: row.scope,
    target: row.target,
    payload: JSON.parse(row.payload) as unknown,
    status: row.status,
    attempts: row.attempts,
    fence: row.fence,
    operationId: row.operation_id,
    claimFence: row.claim_fence,
    providerRef: row.provider_ref,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    unknownOutcomes: row.unknown_outcomes,
    claimedBy: row.claimed_by,
    claimExpiresAt: row.claim_expires_at,
    nextAttemptAt: row.next_attempt_at,
  };
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    seq: row.seq,
    at: row.at,
    tenant: row.tenant,
    scope: row.scope,
    kind: row.kind,
    outcome: row.outcome,
    reason: row.reason,
    taskId: row.task_id,
    operationId: row.operation_id,
    holder: row.holder,
    policyVersion: row.policy_version,
    fence: row.fence,
    currentFence: row.current_fence,
    leaseExpiresAt: row.lease_expires_at,
    records: row.records === null ? null : (JSON.parse(row.records) as AuditRecordChange[]),
    effectKey: row.effect_key,
  };
}

export function toTokenRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    role: row.role as TokenRole,
    label: row.label,
    hash: row.hash,
    createdAt: row.created_at,
  };
}

/** Opaque list cursors: the last key of the page, base64url so it survives a query string. */
export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string {
  return cursor === undefined ? '' : Buffer.from(cursor, 'base64url').toString('utf8');
}
