/**
 * A store operation held in flight, for the PostgreSQL race tests. The operation is planned by
 * core and turned into the apply step's payload by the store's own code, then applied inside a
 * transaction this helper keeps open: until `commit()`, it holds every lock the store's own apply
 * would hold (its rows, its ranges, the shared audit lock), so a test can start a competing store
 * call, see it wait on this transaction (`untilBlocking`), and decide which lands first.
 */
import pg from 'pg';
import {
  refKey,
  type Ref,
  type RowType,
  type Snapshot,
  type Transition,
} from '../../src/core/plan/transition.js';
import { applyPayload } from '../../src/store/postgres/postgres-apply-payload.js';
import { PostgresConnection } from '../../src/store/postgres/postgres-connection.js';
import { PostgresEngine } from '../../src/store/postgres/postgres-engine.js';
import { keyColumns, storedRow } from '../../src/store/postgres/postgres-plan-rows.js';
import {
  ABSENT,
  CallState,
  RowCache,
  type KeyState,
} from '../../src/store/postgres/postgres-snapshot.js';
import { untilDatabase, withClient } from './pg-helpers.js';

type StoredRows = Partial<Record<RowType, Record<string, unknown>[]>>;

interface ApplyAnswer {
  failed: number[];
  /** The current rows of the keys planned with a row… */
  rows: StoredRows | null;
  /** …and of the keys planned absent. */
  absentRows?: StoredRows | null;
}

/** Puts the stored rows of `keys` (absent when in none of `sets`) in the call's fresh rows. */
function learn(call: CallState, sets: (StoredRows | null | undefined)[], keys: string[]): void {
  const current = new Map<string, KeyState>();
  for (const rows of sets) {
    for (const [type, list] of Object.entries(rows ?? {})) {
      for (const columns of list ?? []) {
        const { ref, version, row } = storedRow(type as RowType, columns);
        current.set(refKey(ref), { version, row });
      }
    }
  }
  for (const key of keys) call.fresh.set(key, current.get(key) ?? ABSENT);
}

/** Plans before giving up; a test's own rows settle in two (the first plan guesses them absent). */
const MAX_PLANS = 12;

export class HeldTransaction {
  #ended = false;

  private constructor(
    private readonly url: string,
    private readonly schema: string,
    private readonly client: pg.Client,
    private readonly connection: PostgresConnection,
    private readonly engine: PostgresEngine,
    private readonly pid: number,
  ) {}

  /** Opens a transaction on a connection of its own. */
  static async begin(url: string, schema: string): Promise<HeldTransaction> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    await client.query('BEGIN');
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Ranges are read through the engine, as the store reads them, before this transaction writes.
    const connection = new PostgresConnection(url, 'held', { max: 1 });
    const engine = new PostgresEngine(connection, schema, new RowCache(), undefined);
    return new HeldTransaction(url, schema, client, connection, engine, rows[0]!.pid);
  }

  /**
   * Applies one operation in the open transaction, at store time `now` (as a store with an
   * injected clock does); plans again when a row it planned on was not what it guessed. `known`
   * are rows read before the first plan, for a plan that cannot start from a guess (a cutover's
   * chunk needs its cutover). Returns the operation's answer, or throws its refusal.
   */
  async apply<A>(
    tenant: string,
    plan: (s: Snapshot) => Transition<A>,
    now: number,
    known: Ref[] = [],
  ): Promise<A> {
    const call = new CallState();
    if (known.length > 0) {
      const keys: Record<string, Record<string, unknown>[]> = {};
      for (const ref of known) (keys[ref.type] ??= []).push(keyColumns(ref));
      const { rows } = await this.client.query<{ answer: StoredRows }>(
        `SELECT ${this.schema}.load_rows($1, $2) AS answer`,
        [tenant, JSON.stringify(keys)],
      );
      learn(call, [rows[0]!.answer], known.map(refKey));
    }
    for (let attempt = 0; attempt < MAX_PLANS; attempt += 1) {
      const planned = await this.engine.plan(tenant, call, plan, { send: this.engine.pooled }, now);
      const payload = applyPayload([planned]);
      const { rows } = await this.client.query<{ answer: ApplyAnswer }>(
        `SELECT ${this.schema}.apply($1, $2, true, 0, $3) AS answer`,
        [tenant, now, JSON.stringify(payload.body)],
      );
      const answer = rows[0]!.answer;
      if (answer.failed.length === 0) {
        const result = planned.transition.answer;
        if (!result.ok) throw result.error;
        return result.value;
      }
      // Nothing was written: plan again on the current rows the answer carried.
      learn(call, [answer.rows, answer.absentRows], [...(payload.locked[0]?.keys() ?? [])]);
      call.ranges.clear();
    }
    throw new Error(`the held operation did not settle in ${MAX_PLANS} plans`);
  }

  /** Some other session waits for a lock this transaction holds. */
  async blocksAnother(): Promise<boolean> {
    return withClient(this.url, async (client) => {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
        [this.pid],
      );
      return (rows[0]?.n ?? 0) > 0;
    });
  }

  /** Waits (polling the database) until another session waits for this transaction. */
  untilBlocking(what: string): Promise<void> {
    return untilDatabase(() => this.blocksAnother(), what);
  }

  commit(): Promise<void> {
    return this.#end('COMMIT');
  }

  /** Rolls back unless already ended: for a test's `finally`, so a failure never leaves it open. */
  close(): Promise<void> {
    return this.#end('ROLLBACK');
  }

  async #end(statement: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    try {
      await this.client.query(statement);
    } finally {
      await this.client.end();
      await this.connection.close();
    }
  }
}
