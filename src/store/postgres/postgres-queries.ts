/**
 * Filtered list reads (intents, audit) whose WHERE clause depends on the filters given. Same
 * paging as the other adapters: intents by effectKey with an opaque cursor, audit by seq.
 */
import { auditPage, resolveAuditPage, type AuditPageQuery } from '../../core/audit-page.js';
import { resolveIntentPage } from '../../core/intent-page.js';
import { recordPage, resolveRecordPage, type SizedPage } from '../../core/record-page.js';
import type * as T from '../../types.js';
import { INTENT_ROW_BYTES, budgetedPageStatement } from '../budget-page-sql.js';
import { intentPage } from '../intent-page.js';
import { recordPageStatement } from '../record-page-sql.js';
import { toAuditEntry, toIntent, type AuditRow, type IntentRow } from '../rows.js';
import {
  AUDIT_COLUMNS,
  INTENT_COLUMNS,
  RECORD_COLUMNS_BUT_VALUE,
  toRecordState,
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
  query: T.ListIntentsQuery,
  maxBytes?: number,
): Promise<T.Page<T.Intent>> {
  const page = resolveIntentPage(query, maxBytes);
  const values: unknown[] = [tenant, page.after];
  const where = ['tenant = $1', 'effect_key > $2'];
  if (page.scope !== undefined) where.push(`scope = $${values.push(page.scope)}`);
  if (page.status !== undefined) where.push(`status = $${values.push(page.status)}`);
  const rows = await read(
    budgetedPageStatement(
      {
        rows: `SELECT ${INTENT_COLUMNS}, ${INTENT_ROW_BYTES} AS bytes
          FROM ${schema}.intents WHERE ${where.join(' AND ')}
          ORDER BY effect_key LIMIT $${values.push(page.limit + 1)}`,
        order: 'effect_key',
        bigint: 'bigint',
      },
      `$${values.push(page.maxBytes)}`,
    ),
    values,
  );
  return intentPage(rows.map(toIntent), page);
}

/**
 * What an entry's row spends of the page's budget inside PostgreSQL: its fields of a size the
 * caller chose. jsonb's text puts a space after each `:` and `,` that JSON.stringify leaves out,
 * so half its length never counts more than core/audit-page.ts does.
 */
const AUDIT_ROW_BYTES = `COALESCE(octet_length(records::text), 0) / 2
  + COALESCE(octet_length(reads::text), 0) / 2 + COALESCE(octet_length(reason), 0)`;

/**
 * Entries up to the audit horizon only (postgres-sql-audit.ts): an entry whose transaction is
 * still in flight can never appear later below a seq already returned.
 */
export async function readAuditPage(
  read: RowReader,
  schema: string,
  tenant: string | undefined,
  query: T.AuditQuery,
  maxBytes?: number,
): Promise<T.AuditPage> {
  const [horizonRow] = await read<{ horizon: string }>(
    `SELECT ${schema}.audit_horizon() AS horizon`,
    [],
    'audit_horizon',
  );
  const horizon = Number(horizonRow?.horizon ?? 0);
  const { text, values, page } = auditPageStatement(schema, tenant, query, horizon, maxBytes);
  const rows = await read<AuditRow>(text, values);
  return auditPage(rows.map(toAuditEntry), page);
}

/** The statement of one audit page below `horizon`; exported so a test can EXPLAIN it. */
export function auditPageStatement(
  schema: string,
  tenant: string | undefined,
  query: T.AuditQuery,
  horizon: number,
  maxBytes?: number,
): { text: string; values: unknown[]; page: AuditPageQuery } {
  const page = resolveAuditPage(query, maxBytes);
  // With a tenant, audit_by_tenant (tenant, seq) serves the range in seq order: the read costs
  // the tenant's own entries, however many other tenants have.
  const values: unknown[] = [page.afterSeq, horizon];
  const where = ['seq > $1', 'seq <= $2'];
  if (tenant !== undefined) where.push(`tenant = $${values.push(tenant)}`);
  if (page.scope !== undefined) where.push(`scope = $${values.push(page.scope)}`);
  if (page.kind !== undefined) where.push(`kind = $${values.push(page.kind)}`);
  if (page.outcome !== undefined) where.push(`outcome = $${values.push(page.outcome)}`);
  const rows = `SELECT ${AUDIT_COLUMNS}, ${AUDIT_ROW_BYTES} AS bytes
    FROM ${schema}.audit WHERE ${where.join(' AND ')}
    ORDER BY seq LIMIT $${values.push(page.limit + 1)}`;
  return {
    text: budgetedPageStatement(
      { rows, order: 'seq', bigint: 'bigint' },
      `$${values.push(page.maxBytes)}`,
    ),
    values,
    page,
  };
}

export async function readRecordPage(
  read: (text: string, values: unknown[]) => Promise<(RecordRow & { bytes: number | string })[]>,
  schema: string,
  tenant: string,
  scope: string,
  query: T.ListRecordsQuery,
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
