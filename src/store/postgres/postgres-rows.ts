/**
 * Row shapes of the PostgreSQL tables and their mapping to the public types. bigint columns arrive
 * as strings from the driver, and as numbers inside a function's jsonb answer (a row passed
 * through to_jsonb); every counter fits a double exactly (validation caps them at 2^53).
 */
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

type BigintText = string | number;

export interface ScopeRow {
  scope: string;
  fence: BigintText;
  holder: string | null;
  lease_expires_at: BigintText | null;
  policy_version: string | null;
  status: 'active' | 'deleted';
  updated_at: BigintText;
}

export interface RecordRow {
  name: string;
  live: boolean;
  value: string | null;
  revision: BigintText;
  incarnation: BigintText;
  fingerprint: string | null;
  updated_at: BigintText;
}

export interface IntentRow {
  effect_key: string;
  scope: string;
  target: string;
  payload: string;
  status: IntentStatus;
  attempts: number;
  fence: BigintText;
  operation_id: string;
  claim_fence: BigintText;
  provider_ref: string | null;
  last_error: string | null;
  created_at: BigintText;
  updated_at: BigintText;
  unknown_outcomes: number;
  claimed_by: string | null;
  claim_expires_at: BigintText | null;
  next_attempt_at: BigintText | null;
}

export interface AuditRow {
  seq: BigintText;
  at: BigintText;
  tenant: string;
  scope: string | null;
  kind: AuditKind;
  outcome: AuditOutcome;
  reason: string | null;
  task_id: string | null;
  operation_id: string | null;
  holder: string | null;
  policy_version: string | null;
  fence: BigintText | null;
  current_fence: BigintText | null;
  lease_expires_at: BigintText | null;
  records: AuditRecordChange[] | null;
  effect_key: string | null;
}

export interface TokenRow {
  id: string;
  tenant: string;
  role: string;
  label: string | null;
  hash: string;
  created_at: BigintText;
}

export const SCOPE_COLUMNS =
  'scope, fence, holder, lease_expires_at, policy_version, status, updated_at';
export const RECORD_COLUMNS = 'name, live, value, revision, incarnation, fingerprint, updated_at';
export const INTENT_COLUMNS = `effect_key, scope, target, payload, status, attempts, fence,
  operation_id, claim_fence, provider_ref, last_error, created_at, updated_at, unknown_outcomes,
  claimed_by, claim_expires_at, next_attempt_at`;
export const AUDIT_COLUMNS = `seq, at, tenant, scope, kind, outcome, reason, task_id, operation_id,
  holder, policy_version, fence, current_fence, lease_expires_at, records, effect_key`;
export const TOKEN_COLUMNS = 'id, tenant, role, label, hash, created_at';

function num(value: BigintText): number {
  return Number(value);
}

function numOrNull(value: BigintText | null): number | null {
  return value === null ? null : Number(value);
}

export function toScopeState(row: ScopeRow): ScopeState {
  return {
    scope: row.scope,
    fence: num(row.fence),
    holder: row.holder,
    leaseExpiresAt: numOrNull(row.lease_expires_at),
    policyVersion: row.policy_version,
    status: row.status,
    updatedAt: num(row.updated_at),
  };
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
  return {
    scope,
    name,
    exists: row.live,
    value: row.live && row.value !== null ? (JSON.parse(row.value) as unknown) : null,
    revision: num(row.revision),
    incarnation: num(row.incarnation),
    fingerprint: row.live ? row.fingerprint : null,
    updatedAt: num(row.updated_at),
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
    fence: num(row.fence),
    operationId: row.operation_id,
    claimFence: num(row.claim_fence),
    providerRef: row.provider_ref,
    lastError: row.last_error,
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
    unknownOutcomes: row.unknown_outcomes,
    claimedBy: row.claimed_by,
    claimExpiresAt: numOrNull(row.claim_expires_at),
    nextAttemptAt: numOrNull(row.next_attempt_at),
  };
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    seq: num(row.seq),
    at: num(row.at),
    tenant: row.tenant,
    scope: row.scope,
    kind: row.kind,
    outcome: row.outcome,
    reason: row.reason,
    taskId: row.task_id,
    operationId: row.operation_id,
    holder: row.holder,
    policyVersion: row.policy_version,
    fence: numOrNull(row.fence),
    currentFence: numOrNull(row.current_fence),
    leaseExpiresAt: numOrNull(row.lease_expires_at),
    records: row.records,
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
    createdAt: num(row.created_at),
  };
}

/** Opaque list cursors: the last key of the page, base64url so it survives a query string. */
export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string {
  return cursor === undefined ? '' : Buffer.from(cursor, 'base64url').toString('utf8');
}
