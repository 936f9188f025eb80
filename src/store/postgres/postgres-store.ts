/**
 * The PostgreSQL store. Every mutation is one call of a PL/pgSQL function installed by the
 * migrations (one round trip, one transaction; a cutover is one call to plan it and one per chunk,
 * see postgres-cutover.ts): the decision and its audit entries happen inside the database under
 * row locks, never in this process, and nothing is cached here.
 *
 * Store time is the database clock (`clock_timestamp()`), so every process sharing the database
 * judges leases by one clock. A test may inject a Clock: its now() is then passed to each
 * statement instead.
 */
import type { Clock } from '../../core/clock.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { UNBOUNDED_TRANSACTIONS } from '../../core/transaction-limits.js';
import type { NormalizedCommit } from '../../core/validate.js';
import { FencegateError } from '../../errors.js';
import type {
  AbandonRequest,
  AcquireRequest,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  ClaimIntentsRequest,
  CommitResult,
  CompleteIntentRequest,
  CutoverRecord,
  CutoverRequest,
  CutoverSummary,
  DeleteScopeResult,
  Grant,
  Intent,
  IntentCompletion,
  IntentCompletionResult,
  IntentStatus,
  JobEvent,
  JobRecord,
  ListIntentsQuery,
  ListRecordsQuery,
  ListCutoversQuery,
  ListScopesQuery,
  Page,
  Policy,
  RecordState,
  RegisterPolicyRequest,
  ReleaseRequest,
  ReleaseResult,
  RenewRequest,
  ScopeState,
  TakeoverRequest,
  TokenRecord,
} from '../../types.js';
import type { Store, StoreCapabilities } from '../store.js';
import {
  batchOrder,
  commitBatchStatement,
  commitStatement,
  inFieldOrder,
  toCommitResult,
  type CommitAnswer,
} from './postgres-commit.js';
import { PostgresConnection, type StatementKind } from './postgres-connection.js';
import { DEFAULT_POOL, type PostgresPoolOptions } from './postgres-pool-options.js';
import { leaseRefusal, throwIfRefused, toGrant, type Refusal } from './postgres-answers.js';
import { MUTATION, READ, type PostgresCalls } from './postgres-calls.js';
import {
  listCutovers,
  listJobs,
  listPolicies,
  readCutover,
  recordJobEvents,
  registerPolicy,
  startCutover,
  moveCutoverChunk,
} from './postgres-cutover.js';
import {
  claimIntents,
  completeIntent,
  completeIntents,
  countIntents,
  listTenantsWithOpenIntents,
} from './postgres-dispatch.js';
import { PostgresGroupCommitter } from './postgres-group-commit.js';
import { isPlainBatch, plainBatchStatement } from './postgres-plain-batch.js';
import { listenForIntents } from './postgres-intent-listener.js';
import {
  auditPrunedHash,
  auditPrunedThrough,
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
  RECORD_COLUMNS,
  SCOPE_COLUMNS,
  TOKEN_COLUMNS,
  tokenValues,
  toRecordState,
  toScopeState,
  toTokenRecord,
  type IntentRow,
  type RecordRow,
  type ScopeRow,
  type TokenRow,
  INTENT_COLUMNS,
  toIntent,
} from './postgres-rows.js';
import { DEFAULT_SCHEMA, parsePostgresUrl, requireSchema } from './postgres-url.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`, optionally `?schema=NAME`. */
  url: string;
  /** Tests only: replaces the database clock as store time. */
  clock?: Clock;
  /** The schema holding fencegate's tables and functions (default `fencegate`, or `?schema=`). */
  schema?: string;
  pool?: PostgresPoolOptions;
  /**
   * Batch concurrent commits into one transaction (the server turns this on). Semantics are
   * unchanged; see postgres-group-commit.ts. `maxBatches` bounds the batches in flight (default a
   * quarter of the pool): fewer, larger batches spend less database CPU per commit.
   */
  groupCommit?: boolean | { maxBatches?: number; maxBatchSize?: number };
}

export class PostgresStore implements Store {
  readonly kind = 'postgres';
  readonly capabilities: StoreCapabilities;
  readonly schema: string;
  readonly #connection: PostgresConnection;
  readonly #clock: Clock | undefined;
  readonly #groupCommitter: PostgresGroupCommitter | null;
  /** The store as the dispatch and cutover modules call it. */
  readonly #calls: PostgresCalls;

  private constructor(
    connection: PostgresConnection,
    schema: string,
    options: PostgresStoreOptions,
  ) {
    this.#connection = connection;
    this.schema = schema;
    this.#clock = options.clock;
    this.#calls = {
      schema,
      now: () => this.#now(),
      call: (kind, name, text, values) => this.#call(kind, name, text, values),
      rows: (text, values, name) => this.#rows(text, values, name),
    };
    const group = options.groupCommit;
    this.capabilities = { transaction: UNBOUNDED_TRANSACTIONS };
    const settings = typeof group === 'object' ? group : {};
    this.#groupCommitter =
      group !== undefined && group !== false
        ? new PostgresGroupCommitter(
            {
              single: (tenant, request) => this.#commitOne(tenant, request),
              batch: (items) => this.#commitBatch(items),
            },
            connection.target,
            settings.maxBatches ??
              Math.max(1, Math.floor((options.pool?.max ?? DEFAULT_POOL.max) / 4)),
            settings.maxBatchSize,
          )
        : null;
  }

  /** Connects, applies missing migrations, and returns the store; store_unavailable if unreachable. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const parsed = parsePostgresUrl(options.url);
    const schema = requireSchema(options.schema ?? parsed.schema ?? DEFAULT_SCHEMA);
    const connection = new PostgresConnection(parsed.connectionString, parsed.target, options.pool);
    try {
      await connection.withClient((client) => migrate(client, schema));
    } catch (error) {
      await connection.close();
      throw error;
    }
    return new PostgresStore(connection, schema, options);
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
      name: `fencegate_${name}_${this.schema}`,
      text,
      values,
    });
    return (result.rows[0] as { answer: T }).answer;
  }

  async #rows<R extends object>(text: string, values: unknown[], name?: string): Promise<R[]> {
    const config =
      name === undefined
        ? { text, values }
        : { name: `fencegate_${name}_${this.schema}`, text, values };
    return (await this.#connection.query<R & Record<string, unknown>>(READ, config)).rows;
  }

  async now(): Promise<number> {
    if (this.#clock !== undefined) return this.#clock.now();
    return Number(
      await this.#call<string>(READ, 'now', `SELECT ${this.schema}.db_now() AS answer`, []),
    );
  }

  async acquire(tenant: string, request: AcquireRequest): Promise<Grant> {
    const call = `${this.schema}.acquire($1, $2, $3, $4, $5, $6)`;
    const values = [
      tenant,
      request.scope,
      request.holder,
      request.ttlMs,
      request.policyVersion ?? null,
      this.#now(),
    ];
    const refusalOf = leaseRefusal({ kind: 'acquire', ...request });
    if (request.job === undefined) {
      return toGrant(
        await this.#call(MUTATION, 'acquire', `SELECT ${call} AS answer`, values),
        refusalOf,
      );
    }
    return toGrant(
      await this.#call(
        MUTATION,
        'acquire_job',
        this.#withJobEvents(call, `(a.answer->'grant'->>'fence')::bigint`, '$6', '$7'),
        [...values, JSON.stringify(request.job)],
      ),
      refusalOf,
    );
  }

  /**
   * One statement: the lease function, then, when it did not refuse, its job events
   * (postgres-sql-lease-jobs.ts) under the fence it answers with. OFFSET 0 keeps the call in a
   * subquery of its own, evaluated once and before the events.
   */
  #withJobEvents(call: string, fence: string, now: string, job: string): string {
    return `SELECT a.answer, CASE WHEN a.answer ? 'error' THEN 0
        ELSE ${this.schema}.lease_job_events($1, $2, ${fence}, ${job}::jsonb, ${now}) END AS recorded
      FROM (SELECT ${call} AS answer OFFSET 0) a`;
  }

  async renew(tenant: string, request: RenewRequest): Promise<Grant> {
    return toGrant(
      await this.#call(
        MUTATION,
        'renew',
        `SELECT ${this.schema}.renew($1, $2, $3, $4, $5, $6) AS answer`,
        [tenant, request.scope, request.holder, request.fence, request.ttlMs, this.#now()],
      ),
      leaseRefusal({ kind: 'holder', ...request }),
    );
  }

  async release(tenant: string, request: ReleaseRequest): Promise<ReleaseResult> {
    const call = `${this.schema}.release($1, $2, $3, $4, $5)`;
    const values = [tenant, request.scope, request.holder, request.fence, this.#now()];
    const answer = throwIfRefused(
      request.job === undefined
        ? await this.#call<ReleaseResult | Refusal>(
            MUTATION,
            'release',
            `SELECT ${call} AS answer`,
            values,
          )
        : await this.#call<ReleaseResult | Refusal>(
            MUTATION,
            'release_job',
            this.#withJobEvents(call, '$4', '$5', '$6'),
            [...values, JSON.stringify(request.job)],
          ),
      leaseRefusal({ kind: 'holder', ...request }),
    );
    return { released: true, alreadyReleased: answer.alreadyReleased };
  }

  async takeover(tenant: string, scope: string, request: TakeoverRequest): Promise<Grant> {
    return toGrant(
      await this.#call(
        MUTATION,
        'takeover',
        `SELECT ${this.schema}.takeover($1, $2, $3, $4, $5, $6, $7) AS answer`,
        [
          tenant,
          scope,
          request.holder,
          request.ttlMs ?? null,
          request.policyVersion ?? null,
          request.reason ?? null,
          this.#now(),
        ],
      ),
      leaseRefusal({ kind: 'takeover', scope, policyVersion: request.policyVersion }),
    );
  }

  async cancel(tenant: string, scope: string, request: CancelRequest): Promise<CancelResult> {
    const answer = throwIfRefused(
      await this.#call<CancelResult | Refusal>(
        MUTATION,
        'cancel',
        `SELECT ${this.schema}.cancel($1, $2, $3, $4) AS answer`,
        [tenant, scope, request.reason ?? null, this.#now()],
      ),
      leaseRefusal({ kind: 'operator', scope }),
    );
    return { fence: answer.fence, cancelledIntents: answer.cancelledIntents };
  }

  async deleteScope(
    tenant: string,
    scope: string,
    request: CancelRequest,
  ): Promise<DeleteScopeResult> {
    const answer = throwIfRefused(
      await this.#call<DeleteScopeResult | Refusal>(
        MUTATION,
        'delete_scope',
        `SELECT ${this.schema}.delete_scope($1, $2, $3, $4) AS answer`,
        [tenant, scope, request.reason ?? null, this.#now()],
      ),
      leaseRefusal({ kind: 'operator', scope }),
    );
    return { fence: answer.fence };
  }

  async getScope(tenant: string, scope: string): Promise<ScopeState | null> {
    const rows = await this.#rows<ScopeRow>(
      `SELECT ${SCOPE_COLUMNS} FROM ${this.schema}.scopes WHERE tenant = $1 AND scope = $2`,
      [tenant, scope],
      'get_scope',
    );
    const row = rows[0];
    return row === undefined ? null : toScopeState(row);
  }

  async listScopes(tenant: string, query: ListScopesQuery): Promise<Page<ScopeState>> {
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

  async getRecord(tenant: string, scope: string, name: string): Promise<RecordState> {
    const rows = await this.#rows<RecordRow>(
      `SELECT ${RECORD_COLUMNS} FROM ${this.schema}.records WHERE tenant = $1 AND scope = $2 AND name = $3`,
      [tenant, scope, name],
      'get_record',
    );
    return toRecordState(scope, name, rows[0]);
  }

  async listRecords(tenant: string, scope: string): Promise<RecordState[]> {
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
    query: ListRecordsQuery,
  ): Promise<Page<RecordState>> {
    return readRecordPage(
      (text, values) => this.#rows<RecordRow>(text, values),
      this.schema,
      tenant,
      scope,
      query,
    );
  }

  commit(tenant: string, request: NormalizedCommit): Promise<CommitResult> {
    // A commit that releases its lease is one call of its own; the batch functions only commit.
    if (this.#groupCommitter !== null && request.release !== true) {
      return this.#groupCommitter.submit(tenant, request);
    }
    return this.#commitOne(tenant, request);
  }

  async #commitOne(tenant: string, request: NormalizedCommit): Promise<CommitResult> {
    const result = await this.#connection.query<{ answer: CommitAnswer }>(
      { mutation: true, operationId: request.operationId },
      commitStatement(this.schema, tenant, request, this.#now()),
    );
    return toCommitResult(request, (result.rows[0] as { answer: CommitAnswer }).answer);
  }

  async #commitBatch(
    items: readonly { tenant: string; request: NormalizedCommit }[],
  ): Promise<(CommitResult | FencegateError)[]> {
    const ordered = batchOrder(items);
    const result = await this.#connection.query<{ answer: CommitAnswer[] }>(
      MUTATION,
      isPlainBatch(ordered)
        ? plainBatchStatement(this.schema, ordered, this.#now())
        : commitBatchStatement(this.schema, ordered, this.#now()),
    );
    const answers = (result.rows[0] as { answer: CommitAnswer[] }).answer;
    const byItem = new Map<object, CommitResult | FencegateError>();
    ordered.forEach((item, i) => {
      try {
        byItem.set(item, toCommitResult(item.request, answers[i] as CommitAnswer));
      } catch (error) {
        if (!(error instanceof FencegateError)) throw error;
        byItem.set(item, error);
      }
    });
    return items.map(
      (item) =>
        byItem.get(item) ??
        new FencegateError('internal_error', 'a group commit answered too few items'),
    );
  }

  async getOperation(tenant: string, operationId: string): Promise<CommitResult | null> {
    const rows = await this.#rows<{ outcome: CommitResult }>(
      `SELECT outcome FROM ${this.schema}.operations WHERE tenant = $1 AND operation_id = $2`,
      [tenant, operationId],
      'get_operation',
    );
    const row = rows[0];
    return row === undefined ? null : inFieldOrder(row.outcome);
  }

  /** One call of `abandon_operation` (postgres-sql-after-locks.ts); sending it again is harmless. */
  async abandonOperation(
    tenant: string,
    operationId: string,
    request: AbandonRequest,
  ): Promise<CommitResult> {
    const answer = await this.#call<CommitResult>(
      { mutation: true, operationId },
      'abandon_operation',
      `SELECT ${this.schema}.abandon_operation($1, $2, $3, $4) AS answer`,
      [tenant, operationId, request.reason ?? null, this.#now()],
    );
    return inFieldOrder(answer);
  }

  listIntents(tenant: string, query: ListIntentsQuery): Promise<Page<Intent>> {
    return readIntentPage(
      (text, values) => this.#rows<IntentRow>(text, values),
      this.schema,
      tenant,
      query,
    );
  }

  async getIntent(tenant: string, effectKey: string): Promise<Intent | null> {
    const rows = await this.#rows<IntentRow>(
      `SELECT ${INTENT_COLUMNS} FROM ${this.schema}.intents WHERE tenant = $1 AND effect_key = $2`,
      [tenant, effectKey],
      'get_intent',
    );
    const row = rows[0];
    return row === undefined ? null : toIntent(row);
  }

  claimIntents(tenant: string, request: ClaimIntentsRequest): Promise<Intent[]> {
    return claimIntents(this.#calls, tenant, request);
  }

  completeIntent(
    tenant: string,
    effectKey: string,
    request: CompleteIntentRequest,
  ): Promise<Intent> {
    return completeIntent(this.#calls, tenant, effectKey, request);
  }

  completeIntents(
    tenant: string,
    completions: readonly IntentCompletion[],
  ): Promise<IntentCompletionResult[]> {
    return completeIntents(this.#calls, tenant, completions);
  }

  listTenantsWithOpenIntents(): Promise<string[]> {
    return listTenantsWithOpenIntents(this.#calls);
  }

  countIntents(tenant: string | undefined): Promise<Partial<Record<IntentStatus, number>>> {
    return countIntents(this.#calls, tenant);
  }

  registerPolicy(
    tenant: string,
    request: RegisterPolicyRequest,
    registeredBy: string | null,
  ): Promise<{ policy: Policy; created: boolean }> {
    return registerPolicy(this.#calls, tenant, request, registeredBy);
  }

  listPolicies(tenant: string): Promise<Policy[]> {
    return listPolicies(this.#calls, tenant);
  }

  startCutover(tenant: string, request: CutoverRequest & { cutoverId: string }): Promise<void> {
    return startCutover(this.#calls, tenant, request);
  }

  moveCutoverChunk(tenant: string, cutoverId: string): Promise<number> {
    return moveCutoverChunk(this.#calls, tenant, cutoverId);
  }

  getCutover(tenant: string, cutoverId: string): Promise<CutoverRecord | null> {
    return readCutover(this.#calls, tenant, cutoverId);
  }

  listCutovers(tenant: string, query: ListCutoversQuery): Promise<Page<CutoverSummary>> {
    return listCutovers(this.#calls, tenant, query);
  }

  recordJobEvents(tenant: string, events: JobEvent[]): Promise<void> {
    return recordJobEvents(this.#calls, tenant, events);
  }

  listJobs(tenant: string, scopes?: readonly string[]): Promise<JobRecord[]> {
    return listJobs(this.#calls, tenant, scopes);
  }

  readAudit(tenant: string | undefined, query: AuditQuery): Promise<AuditPage> {
    return readAuditPage(
      (text, values, name) => this.#rows(text, values, name),
      this.schema,
      tenant,
      query,
    );
  }

  async createToken(token: Omit<TokenRecord, 'createdAt'>): Promise<TokenRecord> {
    const rows = await this.#connection.query<TokenRow>(MUTATION, {
      text: `INSERT INTO ${this.schema}.tokens (${TOKEN_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, ${this.schema}.db_now()))
             RETURNING ${TOKEN_COLUMNS}`,
      values: tokenValues(token, this.#now()),
    });
    return toTokenRecord(rows.rows[0] as TokenRow);
  }

  async createTokensIfNone(
    tokens: Omit<TokenRecord, 'createdAt'>[],
  ): Promise<TokenRecord[] | null> {
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
        const created: TokenRecord[] = [];
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

  async listTokens(tenant?: string): Promise<TokenRecord[]> {
    const rows = await this.#rows<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM ${this.schema}.tokens
       WHERE $1::text IS NULL OR tenant = $1 ORDER BY created_at, id`,
      [tenant ?? null],
      'list_tokens',
    );
    return rows.map(toTokenRecord);
  }

  async findToken(hash: string): Promise<TokenRecord | null> {
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
