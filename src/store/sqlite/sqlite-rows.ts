/** Row shapes of the SQLite tables and their mapping to the public types. */
import type { RecordState } from '../../types.js';
import { toRecordState as recordState } from '../rows.js';

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
