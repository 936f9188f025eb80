/**
 * The PostgreSQL tables of core's plan rows (core/plan/transition.ts), described once: the apply
 * step's SQL (postgres-sql-apply.ts), the columns the store reads (postgres-rows.ts) and the
 * mapping between plan rows and columns (postgres-plan-rows.ts) are made from it. The tables
 * themselves are created by the schema's versions (postgres-sql-tables.ts and version 2's
 * ALTER TABLE), whose texts are recorded by digest and never change; a test holds this
 * description against the tables they create.
 */
import type { RowType } from '../../core/plan/transition.js';

export type Column = readonly [name: string, type: string];

/** A table the apply step writes: its row type's name in the payload, key columns, the rest. */
export interface TableShape {
  type: RowType;
  table: string;
  keys: readonly Column[];
  columns: readonly Column[];
  /** Extra conditions under which a locked row does not hold (store time). */
  stale?: string;
  /** The plan row's fields whose name is not their column's in camelCase. */
  fields?: Readonly<Record<string, string>>;
  /** Whether the plan row carries its key columns too (a policy names its version). */
  rowHasKeys?: boolean;
}

const TIME_GUARD = (column: string) => `sign(p_now - x.${column}) <> sign(v_now - x.${column})`;

/** In the order rows are locked: the tables of version 1. */
export const BASELINE_TABLES: readonly TableShape[] = [
  {
    type: 'scope',
    table: 'scopes',
    keys: [['scope', 'text']],
    columns: [
      ['fence', 'bigint'],
      ['holder', 'text'],
      ['lease_expires_at', 'bigint'],
      ['policy_version', 'text'],
      ['status', 'text'],
      ['updated_at', 'bigint'],
    ],
    stale: TIME_GUARD('lease_expires_at'),
  },
  {
    type: 'fenceGrant',
    table: 'fence_grants',
    keys: [
      ['scope', 'text'],
      ['fence', 'bigint'],
    ],
    columns: [['holder', 'text']],
  },
  {
    type: 'record',
    fields: { live: 'exists', value: 'valueJson' },
    table: 'records',
    keys: [
      ['scope', 'text'],
      ['name', 'text'],
    ],
    columns: [
      ['live', 'boolean'],
      ['value', 'text'],
      ['revision', 'bigint'],
      ['incarnation', 'bigint'],
      ['fingerprint', 'text'],
      ['updated_at', 'bigint'],
    ],
  },
  {
    type: 'deletion',
    table: 'record_deletions',
    keys: [
      ['scope', 'text'],
      ['name', 'text'],
      ['revision', 'bigint'],
    ],
    columns: [],
  },
  {
    type: 'operation',
    fields: { created_at: 'at' },
    table: 'operations',
    keys: [['operation_id', 'text']],
    columns: [
      ['request_fingerprint', 'text'],
      ['outcome', 'jsonb'],
      ['created_at', 'bigint'],
    ],
  },
  {
    type: 'intent',
    table: 'intents',
    keys: [['effect_key', 'text']],
    columns: [
      ['scope', 'text'],
      ['target', 'text'],
      ['payload', 'text'],
      ['status', 'text'],
      ['attempts', 'integer'],
      ['fence', 'bigint'],
      ['operation_id', 'text'],
      ['claim_fence', 'bigint'],
      ['claimed_by', 'text'],
      ['claim_expires_at', 'bigint'],
      ['next_attempt_at', 'bigint'],
      ['provider_ref', 'text'],
      ['last_error', 'text'],
      ['unknown_outcomes', 'integer'],
      ['created_at', 'bigint'],
      ['updated_at', 'bigint'],
    ],
    stale: `${TIME_GUARD('claim_expires_at')} OR ${TIME_GUARD('next_attempt_at')}`,
  },
  {
    type: 'policy',
    rowHasKeys: true,
    table: 'policies',
    keys: [['version', 'text']],
    columns: [
      ['digest', 'text'],
      ['description', 'text'],
      ['registered_by', 'text'],
      ['registered_at', 'bigint'],
    ],
  },
  {
    type: 'cutover',
    rowHasKeys: true,
    table: 'cutovers',
    keys: [['cutover_id', 'text']],
    columns: [
      ['request_fingerprint', 'text'],
      ['to_policy', 'text'],
      ['holder', 'text'],
      ['lease_ttl_ms', 'bigint'],
      ['reason', 'text'],
      ['status', 'text'],
      ['start_seq', 'bigint'],
      ['started_at', 'bigint'],
      ['completed_at', 'bigint'],
    ],
  },
  {
    type: 'cutoverStep',
    table: 'cutover_scopes',
    keys: [
      ['cutover_id', 'text'],
      ['scope', 'text'],
    ],
    columns: [
      ['fence', 'bigint'],
      ['skipped', 'boolean'],
    ],
  },
  {
    type: 'job',
    rowHasKeys: true,
    table: 'jobs',
    keys: [['job_id', 'text']],
    columns: [
      ['scope', 'text'],
      ['policy_version', 'text'],
      ['fence', 'bigint'],
      ['state', 'text'],
      ['attempt', 'integer'],
      ['at', 'bigint'],
    ],
  },
];

/**
 * The tables of version 2 (core/grant-token.ts): a scope row also keeps the worker token its grant
 * is bound to.
 */
export const GRANT_TOKEN_TABLES: readonly TableShape[] = BASELINE_TABLES.map((t) =>
  t.type === 'scope' ? { ...t, columns: [...t.columns, ['grant_token_id', 'text'] as const] } : t,
);

/** The tables of version 4: a rollout's documents (core/rollout-rows.ts), as JSON by key. */
export const TABLES: readonly TableShape[] = [
  ...GRANT_TOKEN_TABLES,
  {
    type: 'rollout',
    table: 'rollout_rows',
    keys: [['key', 'text']],
    columns: [['value', 'jsonb']],
  },
];

/** Each row type's table, as of the current version. */
export const TABLE_OF = Object.fromEntries(TABLES.map((t) => [t.type, t])) as Readonly<
  Record<RowType, TableShape>
>;

/** The plan row's field (or ref's) that a column holds. */
export function fieldOf(table: TableShape, column: string): string {
  return (
    table.fields?.[column] ??
    column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase())
  );
}

/** Every column of a row type's table but its tenant and row_version, for a SELECT. */
export function selectList(type: RowType): string {
  const { keys, columns } = TABLE_OF[type];
  return [...keys, ...columns].map(([name]) => name).join(', ');
}
