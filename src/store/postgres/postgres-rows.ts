/**
 * Row shapes of the PostgreSQL tables. bigint columns arrive as strings from the driver, and as
 * numbers inside a function's jsonb answer; the shared mappers in ../rows.ts read both.
 */
import { toRecordState as recordState, type Counter } from '../rows.js';
import type { RecordState } from '../../types.js';
import { selectList } from './postgres-tables.js';

export interface RecordRow {
  name: string;
  live: boolean;
  value: string | null;
  revision: Counter;
  incarnation: Counter;
  fingerprint: string | null;
  updated_at: Counter;
}

export const SCOPE_COLUMNS = selectList('scope');
export const RECORD_COLUMNS = selectList('record');
/** The record columns a page answers besides its value (store/record-page-sql.ts adds it). */
export const RECORD_COLUMNS_BUT_VALUE = [
  'name',
  'live',
  'revision',
  'incarnation',
  'fingerprint',
  'updated_at',
] as const;
export const INTENT_COLUMNS = selectList('intent');
export const AUDIT_COLUMNS = `seq, at, tenant, scope, kind, outcome, reason, task_id, operation_id,
  holder, policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads, token_id`;

export function toRecordState(
  scope: string,
  name: string,
  row: RecordRow | undefined,
): RecordState {
  return recordState(scope, name, row === undefined ? undefined : { ...row, exists: row.live });
}
