/**
 * Bring your own table: check the fence inside your own PostgreSQL transaction, then update your
 * table in the same transaction. `<schema>.assert_fence` (postgres-sql-fence.ts) holds the scope
 * row FOR SHARE until your transaction ends, so no takeover can commit between the check and
 * your UPDATE; when authority has moved it raises, your transaction aborts, and your UPDATE never
 * happens.
 *
 * ```ts
 * await client.query('BEGIN');
 * await assertFence(client, { tenant: 'default', scope: 'wf-123/memory', fence });
 * await client.query('UPDATE workflow_memory SET … WHERE … AND memory_revision = $1', [read]);
 * await client.query('COMMIT');
 * ```
 */
import { commitRejection, refusalError } from '../../core/refusal-messages.js';
import { isAuthorityLostOnCommit, type ErrorDetails, type FencegateError } from '../../errors.js';
import type { CommitRejection } from '../../types.js';
import { DEFAULT_SCHEMA, requireSchema } from './postgres-url.js';

/** SQLSTATE raised by assert_fence. */
export const FENCE_SQLSTATE = 'FG001';

export interface AssertFenceInput {
  tenant: string;
  scope: string;
  fence: number;
  /** The store's schema (default `fencegate`). */
  schema?: string;
  /** Tests only: store time when the store runs on an injected clock. */
  now?: number;
}

/** Anything that runs a parameterized statement: pg's Client, PoolClient or Pool. */
export interface SqlQueryable {
  query(text: string, values?: unknown[]): Promise<unknown>;
}

// assert_fence raises exactly the fence checks of a commit, the ones that mean authority is gone.
function isFenceCode(code: unknown): code is CommitRejection['code'] {
  return typeof code === 'string' && isAuthorityLostOnCommit(code);
}

/**
 * The catalog error an assert_fence failure stands for, or null for any other error. Only the
 * code and details the SQL raises are read: the error is the commit rejection core builds from
 * them, so a refused check and a rejected commit say the same words for the same situation.
 */
export function fenceErrorFrom(error: unknown): FencegateError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, detail } = error as { code?: unknown; detail?: unknown };
  if (code !== FENCE_SQLSTATE || typeof detail !== 'string') return null;
  let parsed: { code?: unknown; details?: unknown };
  try {
    parsed = JSON.parse(detail) as { code?: unknown; details?: unknown };
  } catch {
    return null;
  }
  if (!isFenceCode(parsed.code)) return null;
  const details =
    typeof parsed.details === 'object' && parsed.details !== null
      ? (parsed.details as ErrorDetails)
      : {};
  return refusalError(commitRejection(parsed.code, details));
}

function statement(input: AssertFenceInput): { text: string; values: unknown[] } {
  const schema = requireSchema(input.schema ?? DEFAULT_SCHEMA);
  return input.now === undefined
    ? {
        text: `SELECT ${schema}.assert_fence($1, $2, $3) AS fence`,
        values: [input.tenant, input.scope, input.fence],
      }
    : {
        text: `SELECT ${schema}.assert_fence($1, $2, $3, $4) AS fence`,
        values: [input.tenant, input.scope, input.fence, input.now],
      };
}

/**
 * Checks inside the caller's open transaction that `fence` is the scope's current fence, the
 * scope has a holder and its lease is live by database time. Throws FencegateError
 * (stale_fence, authority_revoked, lease_expired, scope_not_found, scope_deleted); the caller's
 * transaction is then aborted and must be rolled back.
 */
export async function assertFence(client: SqlQueryable, input: AssertFenceInput): Promise<void> {
  const { text, values } = statement(input);
  try {
    await client.query(text, values);
  } catch (error) {
    throw fenceErrorFrom(error) ?? error;
  }
}

/**
 * The part of Kysely's `sql` tag this shim needs: a template tag whose builders execute against an
 * executor (a Kysely instance or transaction), and `sql.id` for the schema-qualified function
 * name. Kysely's own `sql` with a `Kysely` or `Transaction` satisfies it (the tests run it with
 * Kysely 0.28); Kysely is not a dependency of fencegate and nothing here imports it.
 */
export interface KyselySqlTag<Executor> {
  (
    fragments: TemplateStringsArray,
    ...parameters: unknown[]
  ): {
    execute(executor: Executor): Promise<unknown>;
  };
  id(...ids: readonly string[]): unknown;
}

/**
 * assertFence for Kysely: pass Kysely's `sql` and the transaction.
 *
 * ```ts
 * import { sql } from 'kysely';
 * await db.transaction().execute(async (trx) => {
 *   await assertFenceKysely(sql, trx, { tenant, scope, fence });
 *   await trx.updateTable('workflow_memory').set(…).where(…).execute();
 * });
 * ```
 */
export async function assertFenceKysely<Executor>(
  sql: KyselySqlTag<Executor>,
  executor: Executor,
  input: AssertFenceInput,
): Promise<void> {
  const fn = sql.id(requireSchema(input.schema ?? DEFAULT_SCHEMA), 'assert_fence');
  const query =
    input.now === undefined
      ? sql`SELECT ${fn}(${input.tenant}, ${input.scope}, ${input.fence}::bigint) AS fence`
      : sql`SELECT ${fn}(${input.tenant}, ${input.scope}, ${input.fence}::bigint, ${input.now}::bigint) AS fence`;
  try {
    await query.execute(executor);
  } catch (error) {
    throw fenceErrorFrom(error) ?? error;
  }
}
