/**
 * The optimistic engine (store/optimistic) on PostgreSQL. `run` plans one operation and sends its
 * transition to the apply step (postgres-sql-apply.ts) in one statement; when a row it planned on
 * changed, the answer carries the current rows and it plans again, without another read. `plan`
 * and `send` serve group commit (postgres-batcher.ts), which applies many transitions in one
 * statement.
 *
 * Store time is the database clock. A plan runs at an estimate of it (this process's clock plus
 * the offset the last answer showed); the apply step, under its locks, refuses a transition whose
 * decisions the database clock would not repeat, and answers its clock, so the plan runs again at
 * the corrected time. An injected Clock (tests) replaces the database clock outright.
 */
import type { Clock } from '../../core/clock.js';
import { refKey, type RangeRef, type Ref, type Transition } from '../../core/plan/transition.js';
import { FencegateError } from '../../errors.js';
import type { RowType } from '../../core/plan/transition.js';
import {
  answerOf,
  contention,
  MAX_ATTEMPTS,
  OptimisticEngine,
} from '../optimistic/optimistic-engine.js';
import { applyPayload, type PlannedOn } from './postgres-apply-payload.js';
import { READ, statementName } from './postgres-calls.js';
import type { QueryConfig } from 'pg';
import type { PostgresConnection, Send, StatementKind } from './postgres-connection.js';
import { keyColumns, storedRow } from './postgres-plan-rows.js';
import {
  ABSENT,
  CallState,
  POSTGRES_LAYOUT,
  rangeKey,
  type KeyState,
  type LoadedRange,
  type PostgresSnapshot,
  type RowCache,
} from './postgres-snapshot.js';

/** What one operation's statements share: the connection they go on, and its operationId. */
export interface PostgresSend {
  send: Send;
  operationId?: string;
}
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

export class PostgresEngine extends OptimisticEngine<KeyState, LoadedRange, PostgresSend> {
  /**
   * database clock − this process's clock, as `receipt − reading` lower bounds: the database read
   * its clock before the answer arrived, so each answer bounds the offset from below. The largest
   * recent bound is the estimate: it never runs ahead of the database clock.
   */
  #samples: number[] = [];
  #offset = 0;
  /**
   * Per operation, how far after its estimate of the database clock its last apply ran. A plan
   * that takes longer than CLOCK_TOLERANCE_MS (thousands of scopes, a loaded machine) would be
   * refused every round at the current time; its next round plans at the time its apply is
   * expected to run instead. Safe either way: the apply still refuses a decision the database
   * clock judges otherwise, and a time more than the tolerance off.
   */
  readonly #lead = new WeakMap<CallState, number>();

  constructor(
    private readonly connection: PostgresConnection,
    private readonly schema: string,
    cache: RowCache,
    private readonly clock: Clock | undefined,
  ) {
    super(POSTGRES_LAYOUT, cache);
  }

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
  readonly pooled: Send = (kind, config) => this.connection.query(kind, config);

  override snapshot(tenant: string, now: number, call: CallState): PostgresSnapshot {
    return super.snapshot(tenant, now + (this.#lead.get(call) ?? 0), call);
  }

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
    // Store time is taken once a connection is held, never before a wait for the pool; each
    // round plans at one time, the time its apply judges by.
    const held = await this.connection.session((send) =>
      this.attempt(
        tenant,
        call,
        plan,
        { send, operationId },
        {
          attempts: OPTIMISTIC_ATTEMPTS,
          fixedTime: true,
        },
      ),
    );
    if (held !== null) return answerOf(held);
    const transition = await this.connection.transaction(
      { mutation: true, operationId },
      async (query) => {
        const send: Send = (_kind: StatementKind, config: QueryConfig) => query(config);
        const applied = await this.attempt(
          tenant,
          call,
          plan,
          { send, operationId },
          {
            attempts: rounds,
            fixedTime: true,
          },
        );
        if (applied === null) throw contention();
        return applied;
      },
    );
    return answerOf(transition);
  }

  /** Runs work on one connection held throughout (see PostgresConnection.session). */
  session<T>(work: (send: Send) => Promise<T>): Promise<T> {
    return this.connection.session(work);
  }

  /** Reads rows by key into the call's fresh rows (a key without a row reads as absent). */
  async loadKeys(
    tenant: string,
    call: CallState,
    refs: Ref[],
    { send }: PostgresSend,
  ): Promise<void> {
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

  /**
   * Applies transitions of one tenant, planned at one store time, in one statement; per
   * transition, whether it held. One that did not has the current rows of its keys in its call's
   * fresh rows.
   */
  async send(
    plans: readonly PlannedOn<unknown>[],
    { send, operationId }: PostgresSend,
  ): Promise<boolean[]> {
    const first = plans[0];
    if (first === undefined) return [];
    const { tenant, now } = first.snapshot;
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
    if (failed.size > 0 && this.clock === undefined) this.#learnLead(plans, answer.now);
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
        // A cutover's scopes new to its list are stored as rows without a step yet, and the
        // cutover is cached as it loads, without its list (core reads it as a page).
        if (put.type === 'cutover') {
          for (const scope of put.row.scopes) {
            const step = refKey({ type: 'cutoverStep', cutoverId: put.cutoverId, scope });
            this.cache.set(tenant, step, { version, row: null });
          }
          const { scopes: _added, ...cutover } = put.row;
          this.cache.set(tenant, refKey(put), { version, row: cutover });
          continue;
        }
        this.cache.set(tenant, refKey(put), { version, row: put.row });
      }
      for (const ref of transition.delete ?? []) this.cache.set(tenant, refKey(ref), ABSENT);
      return true;
    });
  }

  /** After a refused apply: how far after its plan's estimate (lead aside) each one ran. */
  #learnLead(plans: readonly PlannedOn<unknown>[], databaseNow: number): void {
    for (const { snapshot } of plans) {
      const lead = this.#lead.get(snapshot.call) ?? 0;
      const late = databaseNow - (snapshot.now - lead);
      this.#lead.set(snapshot.call, late > CLOCK_TOLERANCE_MS ? late : 0);
    }
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

  /**
   * Reads ranges in one statement: their names and hashes, and the rows they name. A page of a
   * range is read on its own (loadPage).
   */
  async loadRanges(
    tenant: string,
    call: CallState,
    requested: RangeRef[],
    context: PostgresSend,
  ): Promise<void> {
    const ranges: RangeRef[] = [];
    for (const range of requested) {
      if (range.type === 'page') await this.loadPage(tenant, call, range, context);
      else ranges.push(range);
    }
    if (ranges.length === 0) return;
    const { send } = context;
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

  /**
   * Reads a page of a range (a listing's next names, a chunk's scopes) and the rows it names, by
   * the primary key from its position, stopping at its limit: what it costs follows the page, not
   * the range. A page of a cutover's list reads its rows of cutover_scopes (a scope not moved yet
   * is one without a fence) with the scopes' rows. A page is never expected, so it needs no hash
   * of the database's making.
   */
  async loadPage(
    tenant: string,
    call: CallState,
    page: Extract<RangeRef, { type: 'page' }>,
    { send }: PostgresSend,
  ): Promise<void> {
    const { of, after, limit } = page;
    const learn = (state: KeyState, ref: Ref) => {
      call.fresh.set(refKey(ref), state);
      this.cache.set(tenant, refKey(ref), state);
    };
    const stored = (type: RowType, columns: Record<string, unknown>) => {
      const { ref, version, row } = storedRow(type, columns);
      learn({ version, row }, ref);
    };
    const names: string[] = [];
    if (of.type === 'scopeIntents') {
      // A scope's intents after an effect key (C collation: byte order, the key order).
      const result = await send<{ name: string; row: Record<string, unknown> }>(READ, {
        name: statementName('page_scope_intents', this.schema),
        text: `SELECT x.effect_key AS name, to_jsonb(x) AS row FROM ${this.schema}.intents x
          WHERE x.tenant = $1 AND x.scope = $2 AND x.effect_key > $3
          ORDER BY x.effect_key LIMIT $4`,
        values: [tenant, of.scope, after, limit],
      });
      for (const { name, row } of result.rows) {
        names.push(name);
        stored('intent', row);
      }
    } else if (of.type === 'cutoverScopes') {
      const result = await send<{
        name: string;
        step: Record<string, unknown>;
        scope: Record<string, unknown> | null;
      }>(READ, {
        name: statementName('page_cutover_scopes', this.schema),
        text: `SELECT x.scope AS name, to_jsonb(x) AS step, to_jsonb(s) AS scope
          FROM ${this.schema}.cutover_scopes x
          LEFT JOIN ${this.schema}.scopes s ON s.tenant = x.tenant AND s.scope = x.scope
          WHERE x.tenant = $1 AND x.cutover_id = $2 AND x.scope > $3
          ORDER BY x.scope LIMIT $4`,
        values: [tenant, of.cutoverId, after, limit],
      });
      for (const { name, step, scope } of result.rows) {
        names.push(name);
        stored('cutoverStep', step);
        if (scope === null) learn(ABSENT, { type: 'scope', scope: name });
        else stored('scope', scope);
      }
    } else {
      const [table, column, type] =
        of.type === 'scopes'
          ? (['scopes', 'scope', 'scope'] as const)
          : (['rollout_rows', 'key', 'rollout'] as const);
      // Names are ASCII (NAME_PATTERN, and rollout keys made of them): prefix + U+FFFF bounds them.
      const result = await send<{ name: string; row: Record<string, unknown> }>(READ, {
        name: statementName(`page_${table}`, this.schema),
        text: `SELECT x.${column} AS name, to_jsonb(x) AS row FROM ${this.schema}.${table} x
          WHERE x.tenant = $1 AND x.${column} >= $2 AND x.${column} < $3 AND x.${column} > $4
          ORDER BY x.${column} LIMIT $5`,
        values: [tenant, of.prefix, `${of.prefix}\uffff`, after, limit],
      });
      for (const { name, row } of result.rows) {
        names.push(name);
        stored(type, row);
      }
    }
    call.ranges.set(rangeKey(page), { names, hash: '' });
  }
}
