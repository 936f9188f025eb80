/**
 * Filtered list reads (intents, audit) whose WHERE clause depends on the filters given. Same
 * paging as the other adapters: intents by effectKey with an opaque cursor, audit by seq.
 */
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
import {
  AUDIT_COLUMNS,
  decodeCursor,
  encodeCursor,
  INTENT_COLUMNS,
  RECORD_COLUMNS_BUT_VALUE,
  toAuditEntry,
  toIntent,
  toRecordState,
  type AuditRow,
  type IntentRow,
  type RecordRow,
} from './postgres-rows.js';

export type RowReader = <R extends object>(
  text: string,
  values: unknown[],
  name?: string,
) => Promise<R[]>;

export async function readIntentPage(
  read: (text: string, values: unknown[]) => Promise<IntentRow[]>,
  schema: string,
  tenant: string,
  query: ListIntentsQuery,
): Promise<Page<Intent>> {
  const limit = query.limit ?? DEFAULT_LIST_LIMIT;
  const values: unknown[] = [tenant, decodeCursor(query.cursor)];
  const where = ['tenant = $1', 'effect_key > $2'];
  if (query.scope !== undefined) where.push(`scope = $${values.push(query.scope)}`);
  if (query.status !== undefined) where.push(`status = $${values.push(query.status)}`);
  const rows = await read(
    `SELECT ${INTENT_COLUMNS} FROM ${schema}.intents WHERE ${where.join(' AND ')}
     ORDER BY effect_key LIMIT $${values.push(limit + 1)}`,
    values,
  );
  const items = rows.slice(0, limit).map(toIntent);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.effectKey) : null };
}

const MAX_AUDIT_PAGE = 10_000;

/**
 * Entries up to the audit horizon only (postgres-sql-audit.ts): an entry whose transaction is
 * still in flight can never appear later below a seq already returned.
 */
export async function readAuditPage(
  read: RowReader,
  schema: string,
  tenant: string | undefined,
  query: AuditQuery,
): Promise<AuditPage> {
  const [horizonRow] = await read<{ horizon: string }>(
    `SELECT ${schema}.audit_horizon() AS horizon`,
    [],
    'audit_horizon',
  );
  const horizon = Number(horizonRow?.horizon ?? 0);
  const { text, values, limit } = auditPageStatement(schema, tenant, query, horizon);
  const rows = await read<AuditRow>(text, values);
  const items = rows.slice(0, limit).map(toAuditEntry);
  const last = items.at(-1);
  return { items, nextAfterSeq: rows.length > limit && last ? last.seq : null };
}

/** The statement of one audit page below `horizon`; exported so a test can EXPLAIN it. */
export function auditPageStatement(
  schema: string,
  tenant: string | undefined,
  query: AuditQuery,
  horizon: number,
): { text: string; values: unknown[]; limit: number } {
  const limit = Math.min(query.limit ?? DEFAULT_LIST_LIMIT, MAX_AUDIT_PAGE);
  // With a tenant, audit_by_tenant (tenant, seq) serves the range in seq order: the read costs
  // the tenant's own entries, however many other tenants have.
  const values: unknown[] = [query.afterSeq ?? 0, horizon];
  const where = ['seq > $1', 'seq <= $2'];
  if (tenant !== undefined) where.push(`tenant = $${values.push(tenant)}`);
  if (query.scope !== undefined) where.push(`scope = $${values.push(query.scope)}`);
  if (query.kind !== undefined) where.push(`kind = $${values.push(query.kind)}`);
  if (query.outcome !== undefined) where.push(`outcome = $${values.push(query.outcome)}`);
  return {
    text: `SELECT ${AUDIT_COLUMNS} FROM ${schema}.audit WHERE ${where.join(' AND ')}
     ORDER BY seq LIMIT $${values.push(limit + 1)}`,
    values,
    limit,
  };
}

export async function readRecordPage(
  read: (text: string, values: unknown[]) => Promise<(RecordRow & { bytes: number | string })[]>,
  schema: string,
  tenant: string,
  scope: string,
  query: ListRecordsQuery,
  maxBytes: number,
): Promise<SizedPage> {
  const page = resolveRecordPage(query, maxBytes);
  const values: unknown[] = [];
  const text = recordPageStatement(
    { table: `${schema}.records`, columns: RECORD_COLUMNS_BUT_VALUE, bigint: 'bigint' },
    tenant,
    scope,
    page,
    (value) => `$${values.push(value)}`,
  );
  const rows = await read(text, values);
  return recordPage(
    rows.map((row) => ({
      record: toRecordState(scope, row.name, row),
      bytes: Number(row.bytes),
    })),
    page,
  );
}
