/**
 * The PostgreSQL store. Every change is planned by core in this process (load → plan → apply, the
 * mapping in ../planned-store.ts) and applied by one statement of the apply step, which locks the
 * rows the plan read, checks they are still what it read, writes and appends the audit entries
 * (postgres-sql-apply.ts, postgres-engine.ts). Reads are plain queries.
 *
 * Store time is the database clock (`clock_timestamp()`): a plan that ran at a time the database
 * clock would not judge the same way runs again (postgres-engine.ts). A test may inject a Clock:
 * its now() is then store time outright.
 */
import type { QueueDepths } from '../optimistic/fair-queue.js';
import type { SizedPage } from '../../core/record-page.js';
import type { Clock } from '../../core/clock.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { UNBOUNDED_TRANSACTIONS } from '../../core/transaction-limits.js';
import { CUTOVER_CHUNK, cutoverChunkOf } from '../../core/cutover-rules.js';
import type * as T from '../../types.js';
import { batchedOrAlone, PlannedStore } from '../planned-store.js';
import type * as Planned from '../planned-store.js';
import type { Store, StoreCapabilities } from '../store.js';
import { PostgresBatcher } from './postgres-batcher.js';
import { PostgresConnection, type StatementKind } from './postgres-connection.js';
import { listCutovers, listJobs, listPolicies, readCutover } from './postgres-cutover-reads.js';
import { PostgresEngine } from './postgres-engine.js';
import { countIntents, listTenantsWithOpenIntents } from './postgres-intent-reads.js';
import { DEFAULT_POOL, type PostgresPoolOptions } from './postgres-pool-options.js';
import { READ, MUTATION, statementName, type PostgresCalls } from './postgres-calls.js';
import { listenForIntents } from './postgres-intent-listener.js';
import { inFieldOrder } from './postgres-plan-rows.js';
import {
  auditPrunedHash,
  auditPrunedThrough,
  deleteRollout,
  nextRolloutTenant,
  pruneAudit,
  pruneOperations,
  storeIdOf,
} from './postgres-retention.js';
import {
  loadVerifiedCheckpoint,
  markFirstRunTokensMade,
  saveVerifiedCheckpoint,
} from './postgres-store-marks.js';
import { migrate } from './postgres-migrate.js';
import { readAuditPage, readIntentPage, readRecordPage } from './postgres-queries.js';
import {
  decodeCursor,
  encodeCursor,
  TOKEN_COLUMNS,
  tokenValues,
  toScopeState,
  toTokenRecord,
  type IntentRow,
  type ScopeRow,
  type TokenRow,
  toIntent,
} from '../rows.js';
import {
  RECORD_COLUMNS,
  SCOPE_COLUMNS,
  toRecordState,
  type RecordRow,
  INTENT_COLUMNS,
} from './postgres-rows.js';
import { RowCache } from './postgres-snapshot.js';
import { DEFAULT_SCHEMA, parsePostgresUrl, requireSchema } from './postgres-url.js';

/**
 * Plans a claim may make before giving up. Dispatchers racing for one queue all plan on its head,
 * and every round a claim loses is a claim another dispatcher won, so claims get more rounds than
 * other operations.
 */
const CLAIM_ROUNDS = 100;

const PLAN_LIMITS: Planned.PlanLimits = {
  maxClaims: Number.POSITIVE_INFINITY,
  cutoverChunk: CUTOVER_CHUNK,
  jobEventsPerWrite: Number.POSITIVE_INFINITY,
};

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`, optionally `?schema=NAME`. */
  url: string;
  /** Tests only: replaces the database clock as store time. */
  clock?: Clock;
  /**
   * Tests only: a `pg.Pool` on the same database to take connections from instead of a pool of
   * the store's own (then `pool` is not read); close() leaves it open. A suite that opens a store
   * per case reuses warm server connections: a new one costs PostgreSQL tens of milliseconds of
   * CPU before its first statement. Typed loosely so that the public types need no pg.
   */
  lentPool?: unknown;
  /** Tests only: the scopes one cutover chunk moves, 1 to 1,000 (default 1,000). */
  cutoverChunk?: number;
  /** The schema holding fencegate's tables and functions (default `fencegate`, or `?schema=`). */
  schema?: string;
  pool?: PostgresPoolOptions;
  /**
   * Batch concurrent writes into one transaction (the server turns this on). Semantics are
   * unchanged; see postgres-batcher.ts. `maxBatches` bounds the batches in flight (default an
   * eighth of the pool, at least 1): fewer, larger batches spend less database CPU per write.
   */
  groupCommit?: boolean | { maxBatches?: number; maxBatchSize?: number };
}

export class PostgresStore extends PlannedStore implements Store {
  readonly kind = 'postgres';
  readonly capabilities: StoreCapabilities = { transaction: UNBOUNDED_TRANSACTIONS };
  readonly schema: string;
  readonly #connection: PostgresConnection;
  readonly #clock: Clock | undefined;
  readonly #planLimits: Planned.PlanLimits;
  readonly #engine: PostgresEngine;
  /** Group commit, or null when each write goes alone. */
  readonly #batcher: PostgresBatcher | null;
  /** Applies a dispatcher's completions together, with or without group commit. */
  readonly #together: PostgresBatcher;
  /** The store as the read modules call it. */
  readonly #calls: PostgresCalls;

  private constructor(
    connection: PostgresConnection,
    schema: string,
    engine: PostgresEngine,
    options: PostgresStoreOptions,
  ) {
    super();
    this.#connection = connection;
    this.schema = schema;
    this.#clock = options.clock;
    this.#planLimits = { ...PLAN_LIMITS, cutoverChunk: cutoverChunkOf(options.cutoverChunk) };
    this.#engine = engine;
    this.#calls = {
      schema,
      now: () => this.#now(),
      call: (kind, name, text, values) => this.#call(kind, name, text, values),
      rows: (text, values, name) => this.#rows(text, values, name),
    };
    const group = options.groupCommit;
    const settings = typeof group === 'object' ? group : {};
    // Fewer statements at once contend less for the same WAL and lock-table slots (the commit
    // benchmark: an eighth of a pool of 16 gave 7-21 % more commits a second than a quarter).
    const maxBatches =
      settings.maxBatches ?? Math.max(1, Math.floor((options.pool?.max ?? DEFAULT_POOL.max) / 8));
    this.#batcher =
      group !== undefined && group !== false
        ? new PostgresBatcher(engine, connection.target, maxBatches, settings.maxBatchSize)
        : null;
    this.#together =
      this.#batcher ?? new PostgresBatcher(engine, connection.target, 1, settings.maxBatchSize);
  }

  /** Connects, applies missing migrations, and returns the store; store_unavailable if unreachable. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    cutoverChunkOf(options.cutoverChunk);
    const parsed = parsePostgresUrl(options.url);
    const schema = requireSchema(options.schema ?? parsed.schema ?? DEFAULT_SCHEMA);
    const connection = new PostgresConnection(
      parsed.connectionString,
      parsed.target,
      options.pool,
      options.lentPool,
    );
    const engine = new PostgresEngine(connection, schema, new RowCache(), options.clock);
    try {
      await connection.withClient((client) => migrate(client, schema));
      await engine.calibrate();
    } catch (error) {
      await connection.close();
      throw error;
    }
    return new PostgresStore(connection, schema, engine, options);
  }

  /** Where the store lives, without credentials (host:port/database). */
  get target(): string {
    return this.#connection.target;
  }

  /** Pool counters, for diagnostics and tests. */
  poolStats(): { total: number; idle: number; waiting: number } {
    const pool = this.#connection.pool;
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  /** The injected clock's time, or null to let each statement read the database clock. */
  #now(): number | null {
    return this.#clock === undefined ? null : this.#clock.now();
  }

  async #call<T>(kind: StatementKind, name: string, text: string, values: unknown[]): Promise<T> {
    const result = await this.#connection.query<{ answer: T }>(kind, {
      name: statementName(name, this.schema),
      text,
      values,
    });
    return (result.rows[0] as { answer: T }).answer;
  }

  async #rows<R extends object>(text: string, values: unknown[], name?: string): Promise<R[]> {
    const config =
      name === undefined
        ? { text, values }
        : { name: statementName(name, this.schema), text, values };
    return (await this.#connection.query<R & Record<string, unknown>>(READ, config)).rows;
  }

  /** The writes waiting for a group-commit batch (metrics); null without group commit. */
  commitQueueDepths(): QueueDepths | null {
    return this.#batcher?.depths() ?? null;
  }

  async now(): Promise<number> {
    if (this.#clock !== undefined) return this.#clock.now();
    return Number(
      await this.#call<string>(READ, 'now', `SELECT ${this.schema}.db_now() AS answer`, []),
    );
  }

  /** Commits `send` starts enter one group-commit batch, when they fit one (Store.together). */
  together<T>(send: () => T): T {
    return this.#batcher === null ? send() : this.#batcher.together(send);
  }

  protected apply<A>(write: Planned.PlannedWrite<A>): Promise<A> {
    const { operation, tenant, plan, operationId } = write;
    return batchedOrAlone(this.#batcher, write, () =>
      this.#engine.run(
        tenant,
        plan,
        operationId,
        operation === 'claimIntents' ? CLAIM_ROUNDS : undefined,
      ),
    );
  }

  /** Submitted together, so the batcher applies them in as few statements as it can. */
  protected applyTogether(
    writes: Planned.PlannedWrite<unknown>[],
  ): Promise<Planned.WriteSettlement[]> {
    return this.inWaves(writes, ({ tenant, plan }) => this.#together.submit(tenant, plan));
  }

  protected planLimits(): Planned.PlanLimits {
    return this.#planLimits;
  }

  /** Entries up to the audit horizon read now happened before the cutover's first step. */
  protected async cutoverStartPosition(): Promise<Planned.AuditPosition> {
    const horizon = Number(
      await this.#call<string>(
        READ,
        'cutover_start_position',
        `SELECT ${this.schema}.audit_horizon() AS answer`,
        [],
      ),
    );
    return () => horizon;
  }

  async getScope(tenant: string, scope: string): Promise<T.ScopeState | null> {
    const rows = await this.#rows<ScopeRow>(
      `SELECT ${SCOPE_COLUMNS} FROM ${this.schema}.scopes WHERE tenant = $1 AND scope = $2`,
      [tenant, scope],
      'get_scope',
    );
    const row = rows[0];
    return row === undefined ? null : toScopeState(row);
  }

  async listScopes(tenant: string, query: T.ListScopesQuery): Promise<T.Page<T.ScopeState>> {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    const prefix = query.prefix ?? '';
    const rows = await this.#rows<ScopeRow>(
      `SELECT ${SCOPE_COLUMNS} FROM ${this.schema}.scopes
       WHERE tenant = $1 AND scope > $2 AND scope >= $3 AND starts_with(scope, $3)
       ORDER BY scope LIMIT $4`,
      [tenant, decodeCursor(query.cursor), prefix, limit + 1],
      'list_scopes',
    );
    const items = rows.slice(0, limit).map(toScopeState);
    const last = items.at(-1);
    return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.scope) : null };
  }

  async getRecord(tenant: string, scope: string, name: string): Promise<T.RecordState> {
    const rows = await this.#rows<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.schema}.records WHERE tenant = $1 AND scope = $2 AND name = $3`,
      [tenant, scope, name],
      'get_record',
    );
    return toRecordState(scope, name, rows[0]);
  }

  async listRecords(tenant: string, scope: string): Promise<T.RecordState[]> {
    const rows = await this.#rows<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.schema}.records WHERE tenant = $1 AND scope = $2 ORDER BY name`,
      [tenant, scope],
      'list_records',
    );
    return rows.map((row) => toRecordState(scope, row.name, row));
  }

  listRecordsPage(
    tenant: string,
    scope: string,
    query: T.ListRecordsQuery,
    maxBytes: number,
  ): Promise<SizedPage> {
    return readRecordPage(
      (text, values) => this.#rows<RecordRow & { bytes: string }>(text, values),
      this.schema,
      tenant,
      scope,
      query,
      maxBytes,
    );
  }

  async getOperation(tenant: string, operationId: string): Promise<T.CommitResult | null> {
    const rows = await this.#rows<{ outcome: T.CommitResult }>(
      `SELECT outcome FROM ${this.schema}.operations WHERE tenant = $1 AND operation_id = $2`,
      [tenant, operationId],
      'get_operation',
    );
    const row = rows[0];
    return row === undefined ? null : inFieldOrder(row.outcome);
  }

  listIntents(
    tenant: string,
    query: T.ListIntentsQuery,
    maxBytes?: number,
  ): Promise<T.Page<T.Intent>> {
    return readIntentPage(
      (text, values) => this.#rows<IntentRow>(text, values),
      this.schema,
      tenant,
      query,
      maxBytes,
    );
  }

  async getIntent(tenant: string, effectKey: string): Promise<T.Intent | null> {
    const rows = await this.#rows<IntentRow>(
      `SELECT ${INTENT_COLUMNS} FROM ${this.schema}.intents WHERE tenant = $1 AND effect_key = $2`,
      [tenant, effectKey],
      'get_intent',
    );
    const row = rows[0];
    return row === undefined ? null : toIntent(row);
  }

  listTenantsWithOpenIntents(): Promise<string[]> {
    return listTenantsWithOpenIntents(this.#calls);
  }

  countIntents(tenant: string | undefined): Promise<Partial<Record<T.IntentStatus, number>>> {
    return countIntents(this.#calls, tenant);
  }

  listPolicies(tenant: string): Promise<T.Policy[]> {
    return listPolicies(this.#calls, tenant);
  }

  getCutover(tenant: string, cutoverId: string): Promise<T.CutoverRecord | null> {
    return readCutover(this.#calls, tenant, cutoverId);
  }

  listCutovers(tenant: string, query: T.ListCutoversQuery): Promise<T.Page<T.CutoverSummary>> {
    return listCutovers(this.#calls, tenant, query);
  }

  listJobs(tenant: string, scopes?: readonly string[]): Promise<T.JobRecord[]> {
    return listJobs(this.#calls, tenant, scopes);
  }

  readAudit(
    tenant: string | undefined,
    query: T.AuditQuery,
    maxBytes?: number,
  ): Promise<T.AuditPage> {
    return readAuditPage(
      (text, values, name) => this.#rows(text, values, name),
      this.schema,
      tenant,
      query,
      maxBytes,
    );
  }

  async createToken(token: Omit<T.TokenRecord, 'createdAt'>): Promise<T.TokenRecord> {
    const rows = await this.#connection.query<TokenRow>(MUTATION, {
      text: `INSERT INTO ${this.schema}.tokens (${TOKEN_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, ${this.schema}.db_now()))
             RETURNING ${TOKEN_COLUMNS}`,
      values: tokenValues(token, this.#now()),
    });
    return toTokenRecord(rows.rows[0] as TokenRow);
  }

  async createTokensIfNone(
    tokens: Omit<T.TokenRecord, 'createdAt'>[],
  ): Promise<T.TokenRecord[] | null> {
    return this.#connection.withClient(async (client) => {
      await client.query('BEGIN');
      try {
        // Conflicts with itself and with inserts, not with reads: one bootstrap at a time.
        await client.query(`LOCK TABLE ${this.schema}.tokens IN SHARE ROW EXCLUSIVE MODE`);
        // Once per store, ever: a store whose tokens were all revoked gets no new ones.
        if (!(await markFirstRunTokensMade(client, this.schema))) {
          await client.query('ROLLBACK');
          return null;
        }
        const existing = await client.query(`SELECT 1 FROM ${this.schema}.tokens LIMIT 1`);
        if ((existing.rowCount ?? 0) > 0) {
          await client.query('COMMIT');
          return null;
        }
        const created: T.TokenRecord[] = [];
        for (const token of tokens) {
          const rows = await client.query<TokenRow>({
            text: `INSERT INTO ${this.schema}.tokens (${TOKEN_COLUMNS})
                   VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, ${this.schema}.db_now()))
                   RETURNING ${TOKEN_COLUMNS}`,
            values: tokenValues(token, this.#now()),
          });
          created.push(toTokenRecord(rows.rows[0] as TokenRow));
        }
        await client.query('COMMIT');
        return created;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async listTokens(tenant?: string): Promise<T.TokenRecord[]> {
    const rows = await this.#rows<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM ${this.schema}.tokens
       WHERE $1::text IS NULL OR tenant = $1 ORDER BY created_at, id`,
      [tenant ?? null],
      'list_tokens',
    );
    return rows.map(toTokenRecord);
  }

  async findToken(hash: string): Promise<T.TokenRecord | null> {
    const rows = await this.#rows<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM ${this.schema}.tokens WHERE hash = $1`,
      [hash],
      'find_token',
    );
    const row = rows[0];
    return row === undefined ? null : toTokenRecord(row);
  }

  async deleteToken(id: string): Promise<boolean> {
    const result = await this.#connection.query(MUTATION, {
      text: `DELETE FROM ${this.schema}.tokens WHERE id = $1`,
      values: [id],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async countTokens(): Promise<number> {
    const rows = await this.#rows<{ n: number }>(
      `SELECT count(*)::integer AS n FROM ${this.schema}.tokens`,
      [],
    );
    return rows[0]?.n ?? 0;
  }

  async ping(): Promise<void> {
    await this.#rows('SELECT 1', []);
  }

  pruneOperations(createdBefore: number): Promise<number> {
    return pruneOperations(this.#calls, createdBefore);
  }

  pruneAudit(throughSeq: number, lastHash: string | null = null): Promise<number> {
    return pruneAudit(this.#calls, throughSeq, lastHash);
  }

  nextRolloutTenant(after: string): Promise<string | null> {
    return nextRolloutTenant(this.#calls, after);
  }

  deleteRollout(tenant: string, rolloutId: string): Promise<number> {
    return deleteRollout(this.#calls, tenant, rolloutId);
  }

  auditPrunedThrough(): Promise<number> {
    return auditPrunedThrough(this.#calls);
  }

  saveVerifiedCheckpoint(lastSeq: number, checkpoint: string): Promise<void> {
    return saveVerifiedCheckpoint(this.#calls, lastSeq, checkpoint);
  }

  loadVerifiedCheckpoint(): Promise<string | null> {
    return loadVerifiedCheckpoint(this.#calls);
  }

  auditPrunedHash(): Promise<string | null> {
    return auditPrunedHash(this.#calls);
  }

  storeId(): Promise<string> {
    return storeIdOf(this.#calls);
  }

  /** LISTEN on its own connection: see postgres-intent-listener.ts. */
  watchIntents(listener: (tenant: string) => void): Promise<() => Promise<void>> {
    if (this.#connection.closed) return Promise.reject(new Error('the store is closed'));
    return listenForIntents(this.#connection.pool.options, this.schema, listener);
  }

  close(): Promise<void> {
    return this.#connection.close();
  }
}
