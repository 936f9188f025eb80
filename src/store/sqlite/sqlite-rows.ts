/** Row shapes of the SQLite tables and their mapping to the public types. */
import type { RecordSnapshot, ScopeSnapshot } from '../../core/commit-check.js';
import type { RecordState } from '../../types.js';
import { toRecordState as recordState } from '../rows.js';

export {
  decodeCursor,
  encodeCursor,
  toAuditEntry,
  toIntent,
  toScopeState,
  toTokenRecord,
  type AuditRow,
  type IntentRow,
  type TokenRow,
} from '../rows.js';

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

/** The intent columns toIntent reads, for SELECT lists. */
export const INTENT_COLUMNS = `effect_key, scope, target, payload, status, attempts, fence, operation_id,
  claim_fence, provider_ref, last_error, created_at, updated_at, unknown_outcomes, claimed_by,
  claim_expires_at, next_attempt_at`;

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
  return recordState(
    scope,
    name,
    row === undefined ? undefined : { ...row, exists: row.present === 1 },
  );
}
