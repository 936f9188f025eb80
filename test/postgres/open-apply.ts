/**
 * Looking at, and holding open, the PostgreSQL store's one writing step (`<schema>.apply`) from a
 * test: how many sessions wait on a lock inside it, and a core plan applied by the store's own
 * payload code inside a transaction the test keeps open, so its locks and its audit seq stay held
 * until the test commits.
 */
import type pg from 'pg';
import type { Snapshot, Transition } from '../../src/core/plan/transition.js';
import { applyPayload } from '../../src/store/postgres/postgres-apply-payload.js';
import {
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
 * yet) and applies it in `client`'s open transaction, as a store with an injected clock would.
 * Returns the plan's answer; throws its refusal, or if the guess was wrong (nothing applied).
 */
export async function applyInOpenTransaction<A>(
  client: pg.ClientBase,
  schema: string,
  tenant: string,
  now: number,
  plan: (snapshot: Snapshot) => Transition<A>,
): Promise<A> {
  const snapshot = postgresSnapshot(tenant, now, new RowCache(), new CallState());
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
