/**
 * core's plan rows (core/plan/transition.ts) and the PostgreSQL tables, by the tables'
 * description (postgres-tables.ts): the key columns of a ref, the columns a put writes, and a
 * stored row (as `to_jsonb` of the table's row, with its row_version) back as a plan row; each
 * field under its column's name in camelCase unless the description names it. Only shapes change
 * here; nothing is decided.
 */
import { commitRejection } from '../../core/refusal-messages.js';
import { jsonOf, rememberJson } from '../../core/prepared-value.js';
import type { Put, Ref, Rows, RowType } from '../../core/plan/transition.js';
import type { CommitResult, Intent } from '../../types.js';
import { toIntent, type IntentRow } from '../rows.js';
import { fieldOf, TABLE_OF, type Column, type TableShape } from './postgres-tables.js';

type Columns = Record<string, unknown>;

/** A column's value as core reads it: counters and times as numbers, null for none. */
function decoded([name, type]: Column, c: Columns): unknown {
  const value = c[name] ?? null;
  return value !== null && (type === 'bigint' || type === 'integer') ? Number(value) : value;
}

/** The fields of `columns` by their plan row names. */
function fieldsOf(table: TableShape, columns: readonly Column[], c: Columns): Columns {
  return Object.fromEntries(
    columns.map((column) => [fieldOf(table, column[0]), decoded(column, c)]),
  );
}

export function keyColumns(ref: Ref): Columns {
  const table = TABLE_OF[ref.type];
  const fields = ref as unknown as Columns;
  return Object.fromEntries(table.keys.map(([name]) => [name, fields[fieldOf(table, name)]]));
}

/** The columns a put writes, its key columns included (a new object the caller may extend). */
export function putColumns(put: Put): Columns {
  const table = TABLE_OF[put.type];
  const row = put.row as unknown as Columns;
  const columns = keyColumns(put);
  for (const [name] of table.columns) columns[name] = row[fieldOf(table, name)] ?? null;
  switch (put.type) {
    case 'intent':
      columns.payload = jsonOf(put.row.payload);
      break;
    case 'cutoverStep':
      columns.skipped = put.row.skipped === true;
      break;
    case 'cutover':
      // Not a column: the apply step inserts one cutover_scopes row per scope.
      columns.scopes = put.row.scopes;
      break;
    case 'rollout':
      // The whole document is the value column.
      columns.value = put.row;
      break;
  }
  return columns;
}

export interface StoredRow {
  ref: Ref;
  /** The row_version read; 0 for a key with no row. */
  version: number;
  /** null where core sees no row: none stored, or a cutover's scope not moved yet. */
  row: Rows[RowType] | null;
}

/** A stored row (to_jsonb of its table's row) as core reads it. */
export function storedRow(type: RowType, c: Columns): StoredRow {
  const table = TABLE_OF[type];
  const ref = { type, ...fieldsOf(table, table.keys, c) } as Ref;
  const version = Number(c.row_version);
  const row = {
    ...(table.rowHasKeys === true ? fieldsOf(table, table.keys, c) : {}),
    ...fieldsOf(table, table.columns, c),
  };
  switch (type) {
    case 'deletion':
      return { ref, version, row: { at: null } };
    case 'operation':
      return {
        ref,
        version,
        row: { ...row, outcome: inFieldOrder(c.outcome as CommitResult) } as Rows['operation'],
      };
    case 'intent':
      return { ref, version, row: intentOf(c) };
    case 'cutover':
      // Loaded without its list since schema version 8 (core's cutoverList reads it as a page);
      // a list is still taken where a caller's row has one.
      return {
        ref,
        version,
        row: (c.scopes === undefined
          ? row
          : { ...row, scopes: c.scopes }) as unknown as Rows['cutover'],
      };
    case 'rollout':
      return { ref, version, row: c.value as Rows['rollout'] };
    case 'cutoverStep':
      return {
        ref,
        version,
        row:
          c.fence === null
            ? null
            : c.skipped === true
              ? { fence: Number(c.fence), skipped: true }
              : { fence: Number(c.fence) },
      };
    default:
      return { ref, version, row: row as unknown as Rows[RowType] };
  }
}

/** An intent as read, its payload's JSON text kept so writing the intent back reuses it. */
function intentOf(c: Columns): Intent {
  const intent = toIntent(c as unknown as IntentRow);
  rememberJson(intent.payload, c.payload as string);
  return intent;
}

/**
 * jsonb sorts object keys; answers are rebuilt in the field order of types.ts for readability. A
 * rejection is rebuilt by core from its code and details: the stored message is never answered.
 */
export function inFieldOrder(result: CommitResult): CommitResult {
  if (result.outcome === 'rejected') {
    return {
      outcome: 'rejected',
      operationId: result.operationId,
      replayed: result.replayed,
      error: commitRejection(result.error.code, result.error.details),
    };
  }
  return {
    outcome: 'committed',
    operationId: result.operationId,
    scope: result.scope,
    fence: result.fence,
    records: result.records.map(({ name, revision, incarnation, fingerprint }) => ({
      name,
      revision,
      incarnation,
      fingerprint,
    })),
    intents: result.intents.map(({ effectKey, status }) => ({ effectKey, status })),
    replayed: result.replayed,
  };
}
