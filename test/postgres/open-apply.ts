/**
 * Looking at, and holding open, the PostgreSQL store's one writing step (`<schema>.apply`) from a
 * test: how many sessions wait on a lock inside it, and a core plan applied by the store's own
 * payload code inside a transaction the test keeps open, so its locks and its audit seq stay held
 * until the test commits.
 */
import type pg from 'pg';
import {
  refKey,
  type Ref,
  type RowType,
  type Snapshot,
  type Transition,
} from '../../src/core/plan/transition.js';
import { applyPayload } from '../../src/store/postgres/postgres-apply-payload.js';
import { keyColumns, storedRow } from '../../src/store/postgres/postgres-plan-rows.js';
import {
  ABSENT,
  CallState,
  postgresSnapshot,
  RowCache,
} from '../../src/store/postgres/postgres-snapshot.js';
import { withClient } from './pg-helpers.js';

/** Sessions blocked on a lock while running a statement that calls `<schema>.apply(`. */
export function waitersInApply(url: string, schema: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [`${schema}.apply(`],
    );
    return rows[0]?.n ?? 0;
  });
}

/**
 * Plans `plan` at store time `now` on rows guessed absent (so only for rows that do not exist
 * yet), but for the rows of `read`, read first in the same transaction, and applies it in
 * `client`'s open transaction, as a store with an injected clock would. Returns the plan's answer;
 * throws its refusal, or if a guess was wrong (nothing applied).
 */
export async function applyInOpenTransaction<A>(
  client: pg.ClientBase,
  schema: string,
  tenant: string,
  now: number,
  plan: (snapshot: Snapshot) => Transition<A>,
  read: readonly Ref[] = [],
): Promise<A> {
  const call = new CallState();
  if (read.length > 0) {
    const keys: Record<string, Record<string, unknown>[]> = {};
    for (const ref of read) (keys[ref.type] ??= []).push(keyColumns(ref));
    const { rows } = await client.query<{ answer: Record<string, Record<string, unknown>[]> }>(
      `SELECT ${schema}.load_rows($1, $2) AS answer`,
      [tenant, JSON.stringify(keys)],
    );
    for (const ref of read) call.fresh.set(refKey(ref), ABSENT);
    for (const [type, list] of Object.entries(rows[0]?.answer ?? {})) {
      for (const columns of list) {
        const { ref, version, row } = storedRow(type as RowType, columns);
        call.fresh.set(refKey(ref), { version, row });
      }
    }
  }
  const snapshot = postgresSnapshot(tenant, now, new RowCache(), call);
  const transition = plan(snapshot);
  const { body } = applyPayload([{ snapshot, transition }]);
  const { rows } = await client.query<{ answer: { failed: number[] } }>(
    `SELECT ${schema}.apply($1, $2, true, 0, $3) AS answer`,
    [tenant, now, JSON.stringify(body)],
  );
  if ((rows[0]?.answer.failed.length ?? 1) > 0) {
    throw new Error('the planned rows were not absent: nothing was applied');
  }
  if (!transition.answer.ok) throw transition.answer.error;
  return transition.answer.value;
}
