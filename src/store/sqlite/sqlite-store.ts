/**
 * The embedded SQLite store. better-sqlite3 is synchronous, so each method runs its whole
 * transaction before returning; the async signatures are the Store interface's. Several processes
 * may share one file: writes take the write lock up front (BEGIN IMMEDIATE); while another process
 * holds it, the store waits from the event loop (sqlite-busy.ts), never blocking the process, up
 * to the busy timeout, after which the answer is store_unavailable with nothing changed.
 */
import type { QueueDepths } from '../optimistic/fair-queue.js';
import type { SizedPage } from '../../core/record-page.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { systemClock, type Clock } from '../../core/clock.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { claimResult, completionResult } from '../../core/plan/plan-intents.js';
import type { Answer, Snapshot, Transition } from '../../core/plan/transition.js';
import { UNBOUNDED_TRANSACTIONS } from '../../core/transaction-limits.js';
import { CUTOVER_CHUNK, cutoverChunkOf } from '../../core/cutover-rules.js';
import { isFencegateError } from '../../errors.js';
import type * as T from '../../types.js';
import { GroupCommitter, type Settled } from '../group-commit.js';
import { PlannedStore } from '../planned-store.js';
import type * as Planned from '../planned-store.js';
import type { Store, StoreCapabilities } from '../store.js';
import { applyPlan } from './sqlite-apply.js';
import { PendingRows, writePending } from './sqlite-pending-rows.js';
import {
  DEFAULT_BUSY_TIMEOUT_MS,
  DEFAULT_SYNCHRONOUS,
  journalModeOf,
  mainFileOf,
  openDatabase,
  read,
  storeUnavailable,
  synchronousOf,
  writeTransaction,
  type SqliteDatabase,
  type Synchronous,
} from './sqlite-database.js';
import { listCutovers, listJobs, listPolicies, readCutover } from './sqlite-cutover.js';
import { countIntents, listTenantsWithOpenIntents } from './sqlite-dispatch.js';
import {
  firstRunTokensMade,
  loadVerifiedCheckpoint,
  markFirstRunTokensMade,
  saveVerifiedCheckpoint,
} from './sqlite-store-marks.js';
import { readAuditPage, readIntentPage, readRecordPage } from './sqlite-queries.js';
import {
  decodeCursor,
  encodeCursor,
  toIntent,
  toScopeState,
  toTokenRecord,
  tokenValues,
  type IntentRow,
  type TokenRow,
} from '../rows.js';
import { toRecordState, type RecordRow, type ScopeRow } from './sqlite-rows.js';
import { outcomeOf } from './sqlite-operation-row.js';
import { SqliteRowStatements } from './sqlite-row-statements.js';
import { lastAuditSeq } from './sqlite-snapshot.js';
import { SqliteStatements } from './sqlite-statements.js';
import { isBusy, retryWhileBusy } from './sqlite-busy.js';
import {
  AUDIT_PRUNE_CHUNK,
  auditPrunedHash,
  auditPrunedThrough,
  markAuditPruned,
  OUTCOME_PRUNE_CHUNK,
  pruneAuditStep,
  pruneOperationsStep,
  deleteRolloutStep,
  nextRolloutTenant,
  ROLLOUT_PRUNE_CHUNK,
  storeIdOf,
} from './sqlite-retention.js';
import { WalSync, type SyncFile } from './sqlite-wal-sync.js';
import { Checkpointer, type CheckpointOptions } from './sqlite-checkpointer.js';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for a private in-memory store. */
  path: string;
  clock?: Clock;
  synchronous?: Synchronous;
  /** How long an operation waits for another process's write lock (default 10 s). */
  busyTimeoutMs?: number;
  /**
   * Batch concurrent commits and lease operations into one transaction, one sync of the log for
   * the batch (the server turns this on).
   */
  groupCommit?: boolean;
  /** How the store syncs its WAL under FULL (fs.fdatasync; a test passes one that fails). */
  syncFile?: SyncFile;
  /** When checkpoints move to a thread of their own (sqlite-checkpointer.ts). */
  checkpoints?: CheckpointOptions;
  /** Tests only: the scopes one cutover chunk moves, 1 to 1,000 (default 1,000). */
  cutoverChunk?: number;
}

/** One write of a batch: its plan answers (a refusal is an answer), it never throws one. */
interface WriteJob {
  tenant: string;
  plan: (snapshot: Snapshot) => Transition<unknown>;
}

/** The operations group commit batches with concurrent writes; the others run on their own. */
const GROUP_COMMITTED: ReadonlySet<Planned.PlannedOperation> = new Set<Planned.PlannedOperation>([
  'acquire',
  'renew',
  'release',
  'takeover',
  'cancel',
  'deleteScope',
  'commit',
  'recordJobEvents',
]);

const PLAN_LIMITS: Planned.PlanLimits = {
  maxClaims: Number.POSITIVE_INFINITY,
  cutoverChunk: CUTOVER_CHUNK,
  jobEventsPerWrite: Number.POSITIVE_INFINITY,
};

export class SqliteStore extends PlannedStore implements Store {
  readonly kind = 'sqlite';
  readonly capabilities: StoreCapabilities;
  readonly #db: SqliteDatabase;
  readonly #statements: SqliteStatements;
  readonly #rows: SqliteRowStatements;
  readonly #clock: Clock;
  readonly #planLimits: Planned.PlanLimits;
  readonly #busyTimeoutMs: number;
  readonly #groupCommitter: GroupCommitter<WriteJob, unknown> | null;
  /** Syncs the WAL off the event loop when the store is FULL (sqlite-wal-sync.ts). */
  readonly #walSync: WalSync | null;
  /** Folds the WAL back off the event loop once the store is busy (a file in WAL mode only). */
  readonly #checkpointer: Checkpointer | null;
  #closed = false;

  private constructor(
    db: SqliteDatabase,
    walSync: WalSync | null,
    checkpointer: Checkpointer | null,
    options: SqliteStoreOptions,
  ) {
    super();
    this.#db = db;
    this.#walSync = walSync;
    this.#checkpointer = checkpointer;
    this.#statements = new SqliteStatements(db);
    this.#rows = new SqliteRowStatements(db);
    this.#clock = options.clock ?? systemClock;
    this.#planLimits = { ...PLAN_LIMITS, cutoverChunk: cutoverChunkOf(options.cutoverChunk) };
    this.#busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.capabilities = {
      transaction: UNBOUNDED_TRANSACTIONS,
    };
    this.#groupCommitter =
      options.groupCommit === true
        ? new GroupCommitter((jobs) => this.#commitBatch(jobs), { tenantOf: (job) => job.tenant })
        : null;
  }

  /**
   * FULL on a file is kept by the store itself: the connection runs NORMAL and every answer waits
   * for an fdatasync of the WAL off the event loop (sqlite-wal-sync.ts).
   */
  static open(options: SqliteStoreOptions): SqliteStore {
    cutoverChunkOf(options.cutoverChunk);
    const full = (options.synchronous ?? DEFAULT_SYNCHRONOUS) === 'FULL';
    const synchronous = full ? 'NORMAL' : (options.synchronous ?? DEFAULT_SYNCHRONOUS);
    const db = openDatabase({
      path: options.path,
      synchronous,
      ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    });
    let walSync: WalSync | null = null;
    const wal = journalModeOf(db) === 'wal';
    try {
      if (full && wal) walSync = new WalSync(mainFileOf(db), options.syncFile);
      else if (full) db.pragma('synchronous = FULL');
    } catch (error) {
      db.close();
      throw isFencegateError(error) ? error : storeUnavailable(error);
    }
    const checkpointer = wal
      ? new Checkpointer(db, { path: db.name, synchronous }, options.checkpoints)
      : null;
    return new SqliteStore(db, walSync, checkpointer, options);
  }

  /** The writes waiting for a group-commit batch (metrics); null without group commit. */
  commitQueueDepths(): QueueDepths | null {
    return this.#groupCommitter?.depths() ?? null;
  }

  now(): Promise<number> {
    return Promise.resolve(this.#clock.now());
  }

  /**
   * The durability the store keeps (FULL unless the URL opted out): the connection's own mode, or
   * FULL when the store syncs the WAL itself before answering.
   */
  synchronous(): Promise<Synchronous | 'EXTRA'> {
    return this.#read(() => (this.#walSync === null ? synchronousOf(this.#db) : 'FULL'));
  }

  /**
   * Plans and applies one operation in a write transaction of its own (or, for the operations
   * group commit serves, in the next batch); store time is read after the write lock is held.
   * A refusal's audit entry must survive it: the plan answers the refusal, the transaction
   * commits, and the refusal is thrown afterwards.
   */
  protected async apply<A>({ operation, tenant, plan }: Planned.PlannedWrite<A>): Promise<A> {
    if (this.#groupCommitter !== null && GROUP_COMMITTED.has(operation)) {
      return (await this.#durably(this.#groupCommitter.submit({ tenant, plan }))) as A;
    }
    const answer = await this.#run(() =>
      this.#write(() => this.#applyAll([{ tenant, plan }])[0] as Answer<A>),
    );
    if (!answer.ok) throw answer.error;
    return answer.value;
  }

  /** Writes in one transaction, each settled on its own (with concurrent writes under group commit). */
  protected async applyTogether(
    writes: Planned.PlannedWrite<unknown>[],
  ): Promise<Planned.WriteSettlement[]> {
    const jobs: WriteJob[] = writes.map(({ tenant, plan }) => ({ tenant, plan }));
    const committer = this.#groupCommitter;
    return committer === null
      ? await this.#run(() => this.#commitBatchNow(jobs))
      : await this.#durably(Promise.allSettled(jobs.map((job) => committer.submit(job))));
  }

  protected planLimits(): Planned.PlanLimits {
    return this.#planLimits;
  }

  /** The audit seq read under the write lock: later entries happened after the cutover began. */
  protected cutoverStartPosition(): Promise<Planned.AuditPosition> {
    return Promise.resolve(() => lastAuditSeq(this.#rows));
  }

  /** Applies the plans in order, each on its own store time, then writes their pending rows. */
  #applyAll(jobs: WriteJob[]): Settled<unknown>[] {
    const pending = new PendingRows();
    const answers = jobs.map((job) =>
      applyPlan(
        { rows: this.#rows, tenant: job.tenant, now: this.#clock.now(), pending },
        job.plan,
      ),
    );
    writePending(this.#rows, pending);
    return answers;
  }

  #read<T>(work: () => T): Promise<T> {
    return this.#run(() => read(work));
  }

  /** A write transaction; its answer waits for the WAL sync that covers it (see #durably). */
  #write<T>(work: () => T): T {
    const result = writeTransaction(this.#db, work);
    this.#walSync?.committed();
    this.#checkpointer?.written();
    return result;
  }

  /**
   * Runs `work` now, or, while another process holds the lock, later from the event loop; answers
   * once what this process committed so far is durable.
   */
  #run<T>(work: () => T): Promise<T> {
    return this.#durably(
      retryWhileBusy(() => {
        this.#checkOpen();
        return work();
      }, this.#busyTimeoutMs),
    );
  }

  #checkOpen(): void {
    if (this.#closed) throw storeUnavailable(new Error('the store is closed'));
    // After a failed sync nothing more could be promised durable: refuse until reopened.
    const syncFailure = this.#walSync?.failure ?? null;
    if (syncFailure !== null) throw syncFailure;
  }

  /**
   * Settles as `work` does, but only once every transaction this process committed before is on
   * disk: an answer, a refusal or a read never shows a change a power loss could still undo.
   */
  async #durably<T>(work: Promise<T>): Promise<T> {
    const walSync = this.#walSync;
    if (walSync === null) return work;
    let value: T;
    try {
      value = await work;
    } catch (error) {
      // store_unavailable changed nothing and shows nothing: it need not wait, nor can a failed
      // sync turn it into outcome_unknown. A refusal is an answer, stored: it waits.
      if (!isFencegateError(error) || error.code !== 'store_unavailable') await walSync.durable();
      throw error;
    }
    await walSync.durable();
    return value;
  }

  getScope(tenant: string, scope: string): Promise<T.ScopeState | null> {
    return this.#read(() => {
      const row = this.#statements.getScope.get(tenant, scope) as ScopeRow | undefined;
      return row === undefined ? null : toScopeState(row);
    });
  }

  listScopes(tenant: string, query: T.ListScopesQuery): Promise<T.Page<T.ScopeState>> {
    return this.#read(() => {
      const limit = query.limit ?? DEFAULT_LIST_LIMIT;
      const prefix = query.prefix ?? '';
      const rows = this.#statements.listScopes.all({
        tenant,
        after: decodeCursor(query.cursor),
        prefix,
        // Every name is below U+FFFF, so prefix + U+FFFF bounds the range of names with that prefix.
        prefixEnd: `${prefix}\uffff`,
        limit: limit + 1,
      }) as ScopeRow[];
      const items = rows.slice(0, limit).map(toScopeState);
      const last = items.at(-1);
      return { items, nextCursor: rows.length > limit && last ? encodeCursor(last.scope) : null };
    });
  }

  getRecord(tenant: string, scope: string, name: string): Promise<T.RecordState> {
    return this.#read(() =>
      toRecordState(
        scope,
        name,
        this.#statements.getRecord.get(tenant, scope, name) as RecordRow | undefined,
      ),
    );
  }

  listRecords(tenant: string, scope: string): Promise<T.RecordState[]> {
    return this.#read(() =>
      (this.#statements.listRecords.all(tenant, scope) as RecordRow[]).map((row) =>
        toRecordState(scope, row.name, row),
      ),
    );
  }

  listRecordsPage(
    tenant: string,
    scope: string,
    query: T.ListRecordsQuery,
    maxBytes: number,
  ): Promise<SizedPage> {
    return this.#read(() => readRecordPage(this.#db, tenant, scope, query, maxBytes));
  }

  /** One batch now, or, while another process holds the write lock, later from the event loop. */
  #commitBatch(jobs: WriteJob[]): Settled<unknown>[] | Promise<Settled<unknown>[]> {
    try {
      return this.#commitBatchNow(jobs);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return retryWhileBusy(() => this.#commitBatchNow(jobs), this.#busyTimeoutMs);
    }
  }

  /**
   * Many writes in one transaction. A write's checks and refusals never throw, so the batch runs
   * them back to back, each on its own store time; if one throws anyway (a fault, not a refusal),
   * the whole batch rolls back and each write runs again in a transaction of its own, so only that
   * one fails.
   */
  #commitBatchNow(jobs: WriteJob[]): Settled<unknown>[] {
    this.#checkOpen();
    try {
      return this.#write(() => this.#applyAll(jobs));
    } catch (error) {
      if (isFencegateError(error) || jobs.length === 1) throw error;
      return jobs.map((job) => {
        try {
          return this.#write(() => this.#applyAll([job])[0] as Settled<unknown>);
        } catch (jobError) {
          return { ok: false, error: jobError };
        }
      });
    }
  }

  getOperation(tenant: string, operationId: string): Promise<T.CommitResult | null> {
    return this.#read(() => {
      const row = this.#statements.getOperation.get(tenant, operationId) as
        { outcome: string } | undefined;
      return row === undefined ? null : outcomeOf(operationId, row.outcome);
    });
  }

  listIntents(
    tenant: string,
    query: T.ListIntentsQuery,
    maxBytes?: number,
  ): Promise<T.Page<T.Intent>> {
    return this.#read(() => readIntentPage(this.#db, tenant, query, maxBytes));
  }

  getIntent(tenant: string, effectKey: string): Promise<T.Intent | null> {
    return this.#read(() => {
      const row = this.#statements.getIntent.get(tenant, effectKey) as IntentRow | undefined;
      return row === undefined ? null : toIntent(row);
    });
  }

  /** The completions, then the claim, in one transaction, each answering on its own. */
  async completeAndClaim(
    tenant: string,
    completions: readonly T.IntentCompletion[],
    claim: T.ClaimIntentsRequest,
    maxBytes?: number,
  ): Promise<T.CompleteAndClaimResult> {
    const settled = await this.applyTogether([
      ...this.completionWrites(tenant, completions),
      this.claimWrite(tenant, claim, maxBytes),
    ]);
    const claimed = settled.pop()!;
    return { completions: settled.map(completionResult), claim: claimResult(claimed) };
  }

  listTenantsWithOpenIntents(): Promise<string[]> {
    return this.#read(() => listTenantsWithOpenIntents(this.#db));
  }

  countIntents(tenant: string | undefined): Promise<Partial<Record<T.IntentStatus, number>>> {
    return this.#read(() => countIntents(this.#db, tenant));
  }

  listPolicies(tenant: string): Promise<T.Policy[]> {
    return this.#read(() => listPolicies(this.#db, tenant));
  }

  getCutover(tenant: string, cutoverId: string): Promise<T.CutoverRecord | null> {
    return this.#read(() => readCutover(this.#db, tenant, cutoverId));
  }

  listCutovers(tenant: string, query: T.ListCutoversQuery): Promise<T.Page<T.CutoverSummary>> {
    return this.#read(() => listCutovers(this.#db, tenant, query));
  }

  listJobs(tenant: string, scopes?: readonly string[]): Promise<T.JobRecord[]> {
    return this.#read(() => listJobs(this.#db, tenant, scopes));
  }

  readAudit(
    tenant: string | undefined,
    query: T.AuditQuery,
    maxBytes?: number,
  ): Promise<T.AuditPage> {
    return this.#read(() => readAuditPage(this.#db, tenant, query, maxBytes));
  }

  createToken(token: Omit<T.TokenRecord, 'createdAt'>): Promise<T.TokenRecord> {
    return this.#run(() => this.#write(() => this.#insertToken(token)));
  }

  createTokensIfNone(tokens: Omit<T.TokenRecord, 'createdAt'>[]): Promise<T.TokenRecord[] | null> {
    // The write lock is taken before the count: another process's bootstrap waits for ours.
    return this.#run(() =>
      this.#write(() => {
        // Once per store, ever: a store whose tokens were all revoked gets no new ones.
        if (firstRunTokensMade(this.#db)) return null;
        markFirstRunTokensMade(this.#db, this.#clock.now());
        if ((this.#statements.countTokens.get() as { n: number }).n > 0) return null;
        return tokens.map((token) => this.#insertToken(token));
      }),
    );
  }

  #insertToken(token: Omit<T.TokenRecord, 'createdAt'>): T.TokenRecord {
    const createdAt = this.#clock.now();
    this.#statements.insertToken.run(...tokenValues(token, createdAt));
    return { ...token, createdAt };
  }

  listTokens(tenant?: string): Promise<T.TokenRecord[]> {
    return this.#read(() =>
      (tenant === undefined
        ? (this.#statements.listTokens.all() as TokenRow[])
        : (this.#statements.listTenantTokens.all(tenant) as TokenRow[])
      ).map(toTokenRecord),
    );
  }

  findToken(hash: string): Promise<T.TokenRecord | null> {
    return this.#read(() => {
      const row = this.#statements.findToken.get(hash) as TokenRow | undefined;
      return row === undefined ? null : toTokenRecord(row);
    });
  }

  deleteToken(id: string): Promise<boolean> {
    return this.#run(() => this.#write(() => this.#statements.deleteToken.run(id).changes > 0));
  }

  countTokens(): Promise<number> {
    return this.#read(() => (this.#statements.countTokens.get() as { n: number }).n);
  }

  ping(): Promise<void> {
    return this.#read(() => {
      this.#db.prepare('SELECT 1').get();
    });
  }

  pruneOperations(createdBefore: number): Promise<number> {
    return this.#pruneInSteps(OUTCOME_PRUNE_CHUNK, () =>
      pruneOperationsStep(this.#db, createdBefore),
    );
  }

  async pruneAudit(throughSeq: number, lastHash: string | null = null): Promise<number> {
    await this.#run(() => this.#pruned(markAuditPruned(this.#db, throughSeq, lastHash)));
    return await this.#pruneInSteps(AUDIT_PRUNE_CHUNK, () => pruneAuditStep(this.#db, throughSeq));
  }

  nextRolloutTenant(after: string): Promise<string | null> {
    return this.#read(() => nextRolloutTenant(this.#db, after));
  }

  deleteRollout(tenant: string, rolloutId: string): Promise<number> {
    return this.#pruneInSteps(ROLLOUT_PRUNE_CHUNK, () =>
      deleteRolloutStep(this.#db, tenant, rolloutId),
    );
  }

  /**
   * Runs deletion steps until one deletes less than a full chunk, giving the event loop back
   * between steps: a pass over a large table never holds other requests for more than one step.
   */
  async #pruneInSteps(chunk: number, step: () => number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const changes = await this.#run(() => this.#pruned(step()));
      deleted += changes;
      if (changes < chunk) return deleted;
      await nextTurn();
    }
  }

  /** Pruning commits transactions of its own; its answer waits for their sync like any write. */
  #pruned<T>(result: T): T {
    this.#walSync?.committed();
    return result;
  }

  auditPrunedThrough(): Promise<number> {
    return this.#run(() => auditPrunedThrough(this.#db));
  }

  auditPrunedHash(): Promise<string | null> {
    return this.#run(() => auditPrunedHash(this.#db));
  }

  storeId(): Promise<string> {
    return this.#run(() => storeIdOf(this.#db));
  }

  saveVerifiedCheckpoint(lastSeq: number, checkpoint: string): Promise<void> {
    return this.#run(() =>
      this.#write(() => saveVerifiedCheckpoint(this.#db, lastSeq, checkpoint)),
    );
  }

  loadVerifiedCheckpoint(): Promise<string | null> {
    return this.#run(() => loadVerifiedCheckpoint(this.#db));
  }

  /**
   * Answers what waits for a sync first, then closes the connection: at once when nothing does, so
   * a caller that does not await may open the file again right after.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const syncing = this.#walSync?.close();
    if (syncing) await syncing;
    this.#checkpointer?.close();
    this.#db.close();
  }
}
