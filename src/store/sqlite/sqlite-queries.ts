/**
 * Filtered list reads (intents, audit) whose WHERE clause depends on the filters given, each page
 * within its byte budget (store/budget-page-sql.ts).
 */
import { auditPage, resolveAuditPage, type AuditPageQuery } from '../../core/audit-page.js';
import { resolveIntentPage } from '../../core/intent-page.js';
import { recordPage, resolveRecordPage, type SizedPage } from '../../core/record-page.js';
import type * as T from '../../types.js';
import { INTENT_ROW_BYTES, budgetedPageStatement } from '../budget-page-sql.js';
import { intentPage } from '../intent-page.js';
import { recordPageStatement } from '../record-page-sql.js';
import type { SqliteDatabase } from './sqlite-database.js';
import { recordsOf } from './sqlite-audit-row.js';
import { preparedOnce } from './sqlite-statement-cache.js';
import { toAuditEntry, toIntent, type AuditRow, type IntentRow } from '../rows.js';
import { INTENT_COLUMNS, toRecordState, type RecordRow } from './sqlite-rows.js';

export function readIntentPage(
  db: SqliteDatabase,
  tenant: string,
  query: T.ListIntentsQuery,
  maxBytes?: number,
): T.Page<T.Intent> {
  const page = resolveIntentPage(query, maxBytes);
  const where = ['tenant = @tenant', 'effect_key > @after'];
  if (page.scope !== undefined) where.push('scope = @scope');
  if (page.status !== undefined) where.push('status = @status');
  const sql = budgetedPageStatement(
    {
      rows: `SELECT ${INTENT_COLUMNS}, ${INTENT_ROW_BYTES} AS bytes
        FROM intents WHERE ${where.join(' AND ')} ORDER BY effect_key LIMIT @limit`,
      order: 'effect_key',
      bigint: 'INTEGER',
    },
    '@maxBytes',
  );
  const rows = preparedOnce(db, sql).all({
    tenant,
    after: page.after,
    scope: page.scope ?? null,
    status: page.status ?? null,
    limit: page.limit + 1,
    maxBytes: page.maxBytes,
  }) as IntentRow[];
  return intentPage(rows.map(toIntent), page);
}

/**
 * What an entry's row spends of the page's budget inside SQLite: its fields of a size the caller
 * chose. Record changes are kept compact, shorter than the entry's JSON, so this never counts
 * more than core/audit-page.ts does.
 */
const AUDIT_ROW_BYTES =
  'COALESCE(octet_length(records), 0) + COALESCE(octet_length(reads), 0) + COALESCE(octet_length(reason), 0)';

/** The statement of one audit page; exported so a test can ask SQLite for its plan. */
export function auditPageStatement(
  tenant: string | undefined,
  query: T.AuditQuery,
  maxBytes?: number,
): { sql: string; params: Record<string, string | number | null>; page: AuditPageQuery } {
  const page = resolveAuditPage(query, maxBytes);
  // With a tenant, audit_by_tenant (tenant, seq) serves the range in seq order: the read costs
  // the tenant's own entries, however many other tenants have.
  const where = ['seq > @afterSeq'];
  if (tenant !== undefined) where.push('tenant = @tenant');
  if (page.scope !== undefined) where.push('scope = @scope');
  if (page.kind !== undefined) where.push('kind = @kind');
  if (page.outcome !== undefined) where.push('outcome = @outcome');
  return {
    sql: budgetedPageStatement(
      {
        rows: `SELECT *, ${AUDIT_ROW_BYTES} AS bytes
          FROM audit WHERE ${where.join(' AND ')} ORDER BY seq LIMIT @limit`,
        order: 'seq',
        bigint: 'INTEGER',
      },
      '@maxBytes',
    ),
    params: {
      afterSeq: page.afterSeq,
      tenant: tenant ?? null,
      scope: page.scope ?? null,
      kind: page.kind ?? null,
      outcome: page.outcome ?? null,
      limit: page.limit + 1,
      maxBytes: page.maxBytes,
    },
    page,
  };
}

export function readAuditPage(
  db: SqliteDatabase,
  tenant: string | undefined,
  query: T.AuditQuery,
  maxBytes?: number,
): T.AuditPage {
  const { sql, params, page } = auditPageStatement(tenant, query, maxBytes);
  const rows = preparedOnce(db, sql).all(params) as AuditRow[];
  // Record changes are kept compact on SQLite; the entry is built from them as read.
  return auditPage(
    rows.map((row) => toAuditEntry({ ...row, records: recordsOf(row.records as string | null) })),
    page,
  );
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
  query: T.ListRecordsQuery,
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
