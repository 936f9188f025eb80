/** Filtered list reads (intents, audit) whose WHERE clause depends on the filters given. */
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { recordPage, resolveRecordPage, type SizedPage } from '../../core/record-page.js';
import type {
  AuditPage,
  AuditQuery,
  Intent,
  ListIntentsQuery,
  ListRecordsQuery,
  Page,
} from '../../types.js';
import { recordPageStatement } from '../record-page-sql.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { recordsOf } from './sqlite-audit-row.js';
import { preparedOnce } from './sqlite-statement-cache.js';
import {
  decodeCursor,
  encodeCursor,
  INTENT_COLUMNS,
  toAuditEntry,
  toIntent,
  toRecordState,
  type AuditRow,
  type IntentRow,
  type RecordRow,
} from './sqlite-rows.js';

export function readIntentPage(
  db: SqliteDatabase,
  tenant: string,
  query: ListIntentsQuery,
): Page<Intent> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const where = ['tenant = @tenant', 'effect_key > @after'];
  if (query.scope !== undefined) where.push('scope = @scope');
  if (query.status !== undefined) where.push('status = @status');
  const rows = preparedOnce(
    db,
    `SELECT ${INTENT_COLUMNS}
       FROM intents WHERE ${where.join(' AND ')} ORDER BY effect_key LIMIT @limit`,
  ).all({
    tenant,
    after: decodeCursor(query.cursor),
    scope: query.scope ?? null,
    status: query.status ?? null,
    limit: limit + 1,
  }) as IntentRow[];
  const items = rows.slice(0, limit).map(toIntent);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.effectKey) : null };
}

const MAX_AUDIT_PAGE = 10_000;

/** The statement of one audit page; exported so a test can ask SQLite for its plan. */
export function auditPageStatement(
  tenant: string | undefined,
  query: AuditQuery,
): { sql: string; params: Record<string, string | number | null>; limit: number } {
  const limit = Math.min(query.limit ?? DEFAULT_LIST_LIMIT, MAX_AUDIT_PAGE);
  // With a tenant, audit_by_tenant (tenant, seq) serves the range in seq order: the read costs
  // the tenant's own entries, however many other tenants have.
  const where = ['seq > @afterSeq'];
  if (tenant !== undefined) where.push('tenant = @tenant');
  if (query.scope !== undefined) where.push('scope = @scope');
  if (query.kind !== undefined) where.push('kind = @kind');
  if (query.outcome !== undefined) where.push('outcome = @outcome');
  return {
    sql: `SELECT * FROM audit WHERE ${where.join(' AND ')} ORDER BY seq LIMIT @limit`,
    params: {
      afterSeq: query.afterSeq ?? 0,
      tenant: tenant ?? null,
      scope: query.scope ?? null,
      kind: query.kind ?? null,
      outcome: query.outcome ?? null,
      limit: limit + 1,
    },
    limit,
  };
}

export function readAuditPage(
  db: SqliteDatabase,
  tenant: string | undefined,
  query: AuditQuery,
): AuditPage {
  const { sql, params, limit } = auditPageStatement(tenant, query);
  const rows = preparedOnce(db, sql).all(params) as AuditRow[];
  // Record changes are kept compact on SQLite; the entry is built from them as read.
  const items = rows
    .slice(0, limit)
    .map((row) => toAuditEntry({ ...row, records: recordsOf(row.records as string | null) }));
  const last = items.at(-1);
  return { items, nextAfterSeq: rows.length > limit && last ? last.seq : null };
}

/** The record columns a page answers besides its value (store/record-page-sql.ts adds it). */
const RECORD_COLUMNS_BUT_VALUE = [
  'name',
  'present',
  'revision',
  'incarnation',
  'fingerprint',
  'updated_at',
] as const;

export function readRecordPage(
  db: SqliteDatabase,
  tenant: string,
  scope: string,
  query: ListRecordsQuery,
  maxBytes: number,
): SizedPage {
  const page = resolveRecordPage(query, maxBytes);
  const values: unknown[] = [];
  const text = recordPageStatement(
    { table: 'records', columns: RECORD_COLUMNS_BUT_VALUE, bigint: 'INTEGER' },
    tenant,
    scope,
    page,
    (value) => {
      values.push(value);
      return '?';
    },
  );
  const rows = preparedOnce(db, text).all(...values) as (RecordRow & { bytes: number })[];
  return recordPage(
    rows.map((row) => ({ record: toRecordState(scope, row.name, row), bytes: row.bytes })),
    page,
  );
}
