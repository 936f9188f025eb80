/**
 * load → plan → apply on PostgreSQL. `run` plans one operation over a PostgresSnapshot and sends
 * its transition to the apply step (postgres-sql-apply.ts) in one statement; when a row it planned
 * on changed, the answer carries the current rows and it plans again, without another read.
 * `plan` and `apply` serve group commit (postgres-batcher.ts), which applies many transitions in
 * one statement.
 *
 * Store time is the database clock. A plan runs at an estimate of it (this process's clock plus
 * the offset the last answer showed); the apply step, under its locks, refuses a transition whose
 * decisions the database clock would not repeat, and answers its clock, so the plan runs again at
 * the corrected time. An injected Clock (tests) replaces the database clock outright.
 */
import type { Clock } from '../../core/clock.js';
import {
  isRangeRef,
  refKey,
  type RangeRef,
  type Ref,
  type Transition,
} from '../../core/plan/transition.js';
import { FencegateError } from '../../errors.js';
import type { RowType } from '../../core/plan/transition.js';
import { applyPayload, type PlannedOn } from './postgres-apply-payload.js';
import { READ, statementName } from './postgres-calls.js';
import type { QueryConfig } from 'pg';
import type { PostgresConnection, Send, StatementKind } from './postgres-connection.js';
import { keyColumns, storedRow } from './postgres-plan-rows.js';
import {
  ABSENT,
  CallState,
  PostgresSnapshot,
  RangeMiss,
  rangeKey,
  type KeyState,
  type RowCache,
} from './postgres-snapshot.js';

/** Plans per call before giving up on rows that keep changing. */
export const MAX_ATTEMPTS = 12;
/**
 * Plans applied without holding locks between round trips before an operation holds them: a row
 * many writers change at once could otherwise keep changing between each plan and its apply.
 */
export const OPTIMISTIC_ATTEMPTS = 3;
/**
 * How far a plan's estimate of the database clock may be from it, in ms: the times a plan writes
 * (a lease's expiry, an audit entry's) are this close to the database clock, or it plans again.
 */
const CLOCK_TOLERANCE_MS = 1_000;

type StoredRows = Partial<Record<RowType, Record<string, unknown>[]>>;

interface ApplyAnswer {
  now: number;
  version?: number;
  failed: number[];
  /** When some transition did not hold: the current rows of the keys planned with a row… */
  rows: StoredRows | null;
  /** …and of the keys planned absent. */
  absentRows: StoredRows | null;
}

/** Answers whose clock readings bound the offset (a window, so a clock step ages out). */
const CLOCK_SAMPLES = 32;

export class PostgresEngine {
  /**
   * database clock − this process's clock, as `receipt − reading` lower bounds: the database read
   * its clock before the answer arrived, so each answer bounds the offset from below. The largest
   * recent bound is the estimate: it never runs ahead of the database clock.
   */
  #samples: number[] = [];
  #offset = 0;

  constructor(
    private readonly connection: PostgresConnection,
    private readonly schema: string,
    private readonly cache: RowCache,
    private readonly clock: Clock | undefined,
  ) {}

  /** Learns the database clock's offset from this process's clock. */
  async calibrate(): Promise<void> {
    if (this.clock !== undefined) return;
    const result = await this.connection.query<{ now: string }>(READ, {
      text: `SELECT ${this.schema}.db_now() AS now`,
    });
    this.#observe(Number(result.rows[0]?.now), false);
  }

  /** Takes a database clock reading that arrived just now; `reset` drops the older ones. */
  #observe(databaseNow: number, reset: boolean): void {
    const sample = databaseNow - Date.now();
    if (reset) this.#samples = [];
    this.#samples.push(sample);
    if (this.#samples.length > CLOCK_SAMPLES) this.#samples.shift();
    this.#offset = Math.max(...this.#samples);
  }

  /** Sends a statement on any pooled connection. */
  readonly #pooled: Send = (kind, config) => this.connection.query(kind, config);

  /** Store time as a plan sees it. */
  now(): number {
    return this.clock !== undefined ? this.clock.now() : Date.now() + this.#offset;
  }

  /**
   * Plans and applies one operation; refusals are thrown after their audit entry is stored. After
   * OPTIMISTIC_ATTEMPTS plans that did not hold, the next ones run in one transaction that keeps
   * the locks each failed apply took, so the rows it planned on stay as they are until it holds.
   */
  async run<A>(
    tenant: string,
    plan: (snapshot: PostgresSnapshot) => Transition<A>,
    operationId?: string,
    rounds = MAX_ATTEMPTS,
  ): Promise<A> {
    const call = new CallState();
    // Store time is taken once a connection is held, never before a wait for the pool.
    const held = await this.connection.session(async (send) => {
      for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt += 1) {
        const now = this.now();
        const planned = await this.plan(tenant, call, plan, now, send);
        const [applied] = await this.apply(tenant, now, [planned], operationId, send);
        if (applied === true) return planned.transition;
      }
      return null;
    });
    if (held !== null) return answerOf(held);
    const transition = await this.connection.transaction(
      { mutation: true, operationId },
      async (query) => {
        const send: Send = (_kind: StatementKind, config: QueryConfig) => query(config);
        for (let attempt = 0; attempt < rounds; attempt += 1) {
          const now = this.now();
          const planned = await this.plan(tenant, call, plan, now, send);
          const [applied] = await this.apply(tenant, now, [planned], operationId, send);
          if (applied === true) return planned.transition;
        }
        throw this.contention();
      },
    );
    return answerOf(transition);
  }

  /** Runs work on one connection held throughout (see PostgresConnection.session). */
  session<T>(work: (send: Send) => Promise<T>): Promise<T> {
    return this.connection.session(work);
  }

  /**
   * Plans until every range the plan lists or expects is loaded in this call. A plan that throws
   * on rows it was only guessing (a cached row evicted, say) runs again on those rows read.
   */
  async plan<A>(
    tenant: string,
    call: CallState,
    plan: (snapshot: PostgresSnapshot) => Transition<A>,
    now: number,
    send: Send = this.#pooled,
  ): Promise<PlannedOn<A>> {
    for (;;) {
      const snapshot = new PostgresSnapshot(tenant, now, this.cache, call);
      let missing: RangeRef | undefined;
      try {
        const transition = plan(snapshot);
        missing = transition.expect.find(
          (ref): ref is RangeRef => isRangeRef(ref) && !call.ranges.has(rangeKey(ref)),
        );
        if (missing === undefined) return { snapshot, transition };
      } catch (error) {
        if (!(error instanceof RangeMiss)) {
          const guessed = [...snapshot.read].filter(([key]) => !call.fresh.has(key));
          if (guessed.length === 0) throw error;
          await this.loadKeys(
            tenant,
            call,
            guessed.map(([, { ref }]) => ref),
            send,
          );
          continue;
        }
        missing = error.range;
      }
      await this.loadRanges(tenant, call, [missing], send);
    }
  }

  /** Reads rows by key into the call's fresh rows (a key without a row reads as absent). */
  async loadKeys(tenant: string, call: CallState, refs: Ref[], send: Send): Promise<void> {
    const keys: Record<string, Record<string, unknown>[]> = {};
    for (const ref of refs) (keys[ref.type] ??= []).push(keyColumns(ref));
    const result = await send<{ answer: StoredRows }>(READ, {
      name: statementName('load_rows', this.schema),
      text: `SELECT ${this.schema}.load_rows($1, $2) AS answer`,
      values: [tenant, JSON.stringify(keys)],
    });
    const found = this.#rowsByKey([result.rows[0]?.answer ?? null]);
    for (const ref of refs) {
      const key = refKey(ref);
      const state = found.get(key) ?? ABSENT;
      call.fresh.set(key, state);
      this.cache.set(tenant, key, state);
    }
  }

  contention(): FencegateError {
    return new FencegateError(
      'store_unavailable',
      `the rows of this operation changed under it ${MAX_ATTEMPTS} times in a row; nothing was changed, try again`,
    );
  }

  /**
   * Applies transitions of one tenant, planned at `now`, in one statement; per transition, whether
   * it held. One that did not has the current rows of its keys in its call's fresh rows.
   */
  async apply(
    tenant: string,
    now: number,
    plans: readonly PlannedOn<unknown>[],
    operationId?: string,
    send: Send = this.#pooled,
  ): Promise<boolean[]> {
    const payload = applyPayload(plans);
    const result = await send<{ answer: ApplyAnswer }>(
      { mutation: true, operationId, insertRaces: true },
      {
        name: statementName('apply', this.schema),
        text: `SELECT ${this.schema}.apply($1, $2, $3, $4, $5) AS answer`,
        values: [
          tenant,
          now,
          this.clock !== undefined,
          CLOCK_TOLERANCE_MS,
          JSON.stringify(payload.body),
        ],
      },
    );
    const answer = (result.rows[0] as { answer: ApplyAnswer }).answer;
    if (this.clock === undefined)
      this.#observe(answer.now, Math.abs(answer.now - now) > CLOCK_TOLERANCE_MS);
    const failed = new Set(answer.failed);
    const current = failed.size > 0 ? this.#rowsByKey([answer.rows, answer.absentRows]) : null;
    return plans.map(({ snapshot, transition }, t) => {
      if (current !== null && failed.has(t)) {
        for (const key of payload.locked[t]?.keys() ?? []) {
          const state = current.get(key) ?? ABSENT;
          snapshot.call.fresh.set(key, state);
          this.cache.set(tenant, key, state);
        }
        snapshot.call.ranges.clear();
        return false;
      }
      // The rows it read are cached already (as loaded, or from the cache); what it wrote is new.
      const version = answer.version ?? 0;
      for (const put of transition.put) {
        this.cache.set(tenant, refKey(put), { version, row: put.row });
        // A new cutover's scopes are stored as rows without a step yet.
        if (put.type === 'cutover' && snapshot.state(put).version === 0) {
          for (const scope of put.row.scopes) {
            const step = refKey({ type: 'cutoverStep', cutoverId: put.cutoverId, scope });
            this.cache.set(tenant, step, { version, row: null });
          }
        }
      }
      return true;
    });
  }

  #rowsByKey(sets: (StoredRows | null)[]): Map<string, KeyState> {
    const byKey = new Map<string, KeyState>();
    for (const rows of sets) {
      for (const [type, list] of Object.entries(rows ?? {})) {
        for (const columns of list ?? []) {
          const { ref, version, row } = storedRow(type as RowType, columns);
          byKey.set(refKey(ref), { version, row });
        }
      }
    }
    return byKey;
  }

  /** Reads ranges in one statement: their names and hashes, and the rows they name. */
  async loadRanges(tenant: string, call: CallState, ranges: RangeRef[], send: Send): Promise<void> {
    const result = await send<{
      answer: { ranges: { names: string[]; hash: string }[]; rows: StoredRows };
    }>(READ, {
      name: statementName('load_ranges', this.schema),
      text: `SELECT ${this.schema}.load_ranges($1, $2) AS answer`,
      values: [tenant, JSON.stringify(ranges)],
    });
    const answer = result.rows[0]?.answer;
    if (answer === undefined)
      throw new FencegateError('internal_error', 'a range read answered nothing');
    ranges.forEach((range, i) => {
      const loaded = answer.ranges[i];
      if (loaded !== undefined) call.ranges.set(rangeKey(range), loaded);
    });
    for (const [key, state] of this.#rowsByKey([answer.rows])) {
      call.fresh.set(key, state);
      this.cache.set(tenant, key, state);
    }
  }
}

/** A transition's answer as the caller gets it: its value, or its refusal thrown. */
function answerOf<A>(transition: Transition<A>): A {
  if (!transition.answer.ok) throw transition.answer.error;
  return transition.answer.value;
}
