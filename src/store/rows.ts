/**
 * Row shapes shared by the SQL adapters and their mapping to the public types. Counters and times
 * arrive as numbers from SQLite and as bigint text from PostgreSQL (every one fits a double
 * exactly: validation caps them at 2^53), so they are read through Number().
 */
import type {
  AuditEntry,
  AuditKind,
  AuditOutcome,
  AuditReadCheck,
  AuditRecordChange,
  Intent,
  IntentStatus,
  Policy,
  RecordState,
  ScopeState,
  TokenRecord,
  TokenRole,
} from '../types.js';

export type Counter = number | string;

export interface ScopeRow {
  scope: string;
  fence: Counter;
  holder: string | null;
  lease_expires_at: Counter | null;
  policy_version: string | null;
  status: 'active' | 'deleted';
  updated_at: Counter;
}

export interface IntentRow {
  effect_key: string;
  scope: string;
  target: string;
  payload: string;
  status: IntentStatus;
  attempts: number;
  fence: Counter;
  operation_id: string;
  claim_fence: Counter;
  provider_ref: string | null;
  last_error: string | null;
  created_at: Counter;
  updated_at: Counter;
  unknown_outcomes: number;
  claimed_by: string | null;
  claim_expires_at: Counter | null;
  next_attempt_at: Counter | null;
}

export interface AuditRow {
  seq: Counter;
  at: Counter;
  tenant: string;
  scope: string | null;
  kind: AuditKind;
  outcome: AuditOutcome;
  reason: string | null;
  task_id: string | null;
  operation_id: string | null;
  holder: string | null;
  policy_version: string | null;
  fence: Counter | null;
  current_fence: Counter | null;
  lease_expires_at: Counter | null;
  /** JSON text (SQLite) or already parsed (PostgreSQL jsonb). */
  records: string | AuditRecordChange[] | null;
  effect_key: string | null;
  /** JSON text (SQLite) or already parsed (PostgreSQL jsonb). */
  reads: string | AuditReadCheck[] | null;
  /** The token the entry's request was made with; null when none was named. */
  token_id: string | null;
}

/** The token table's columns, in the order both SQL adapters read and write them. */
export const TOKEN_COLUMNS = 'id, tenant, role, label, hash, may_take_over, created_at';

export interface TokenRow {
  id: string;
  tenant: string;
  role: string;
  label: string | null;
  hash: string;
  /** JSON list of scope prefixes, or null for none. */
  may_take_over: string | null;
  created_at: Counter;
}

/** A record as both adapters read it, whatever their column for "exists" is called. */
export interface RecordFields {
  exists: boolean;
  value: string | null;
  revision: Counter;
  incarnation: Counter;
  fingerprint: string | null;
  updated_at: Counter;
}

function orNull(value: Counter | null): number | null {
  return value === null ? null : Number(value);
}

export function toScopeState(row: ScopeRow): ScopeState {
  return {
    scope: row.scope,
    fence: Number(row.fence),
    holder: row.holder,
    leaseExpiresAt: orNull(row.lease_expires_at),
    policyVersion: row.policy_version,
    status: row.status,
    updatedAt: Number(row.updated_at),
  };
}

/** A record that never existed reads as `exists: false` at revision 0. */
export function toRecordState(
  scope: string,
  name: string,
  row: RecordFields | undefined,
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
    exists: row.exists,
    value: row.exists && row.value !== null ? (JSON.parse(row.value) as unknown) : null,
    revision: Number(row.revision),
    incarnation: Number(row.incarnation),
    fingerprint: row.exists ? row.fingerprint : null,
    updatedAt: Number(row.updated_at),
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
    fence: Number(row.fence),
    operationId: row.operation_id,
    claimFence: Number(row.claim_fence),
    providerRef: row.provider_ref,
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    unknownOutcomes: row.unknown_outcomes,
    claimedBy: row.claimed_by,
    claimExpiresAt: orNull(row.claim_expires_at),
    nextAttemptAt: orNull(row.next_attempt_at),
  };
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    tenant: row.tenant,
    scope: row.scope,
    kind: row.kind,
    outcome: row.outcome,
    reason: row.reason,
    taskId: row.task_id,
    operationId: row.operation_id,
    holder: row.holder,
    policyVersion: row.policy_version,
    fence: orNull(row.fence),
    currentFence: orNull(row.current_fence),
    leaseExpiresAt: orNull(row.lease_expires_at),
    records:
      typeof row.records === 'string'
        ? (JSON.parse(row.records) as AuditRecordChange[])
        : row.records,
    effectKey: row.effect_key,
    reads: typeof row.reads === 'string' ? (JSON.parse(row.reads) as AuditReadCheck[]) : row.reads,
    // Absent rather than null, so an entry without a token hashes as it did before entries named one.
    ...(row.token_id === null ? {} : { tokenId: row.token_id }),
  };
}

/** The stored form of a token's take-over prefixes: null when it has none. */
export function takeOverColumn(prefixes: readonly string[] | undefined): string | null {
  return prefixes === undefined || prefixes.length === 0 ? null : JSON.stringify(prefixes);
}

/**
 * A token's row values in TOKEN_COLUMNS order, for both SQL adapters' inserts; PostgreSQL reads
 * a null `createdAt` as the database's now.
 */
export function tokenValues(
  token: Omit<TokenRecord, 'createdAt'>,
  createdAt: number | null,
): unknown[] {
  return [
    token.id,
    token.tenant,
    token.role,
    token.label,
    token.hash,
    takeOverColumn(token.mayTakeOver),
    createdAt,
  ];
}

export function toTokenRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    tenant: row.tenant,
    role: row.role as TokenRole,
    label: row.label,
    hash: row.hash,
    ...(row.may_take_over === null
      ? {}
      : { mayTakeOver: JSON.parse(row.may_take_over) as string[] }),
    createdAt: Number(row.created_at),
  };
}

/** Opaque list cursors: the last key of the page, base64url so it survives a query string. */
export function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string {
  return cursor === undefined ? '' : Buffer.from(cursor, 'base64url').toString('utf8');
}

export interface PolicyRow {
  version: string;
  digest: string | null;
  description: string | null;
  registered_by: string | null;
  registered_at: Counter;
}

export function toPolicy(row: PolicyRow): Policy {
  return {
    version: row.version,
    digest: row.digest,
    description: row.description,
    registeredBy: row.registered_by,
    registeredAt: Number(row.registered_at),
  };
}
