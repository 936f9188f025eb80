/**
 * The etcd store: every operation is load → plan (core/plan) → one Txn (etcd-engine.ts). Time is
 * data: lease expiries are stored as numbers and judged by this server's clock, read after the
 * rows the plan decides on were read; etcd's own leases are not used. See docs/etcd.md for the
 * clock assumption, the key layout, limits and compaction.
 */
import type { QueueDepths } from '../optimistic/fair-queue.js';
import type { SizedPage } from '../../core/record-page.js';
import { CompareResult, CompareTarget } from 'etcd3';
import { systemClock, type Clock } from '../../core/clock.js';
import { itemsWithinBudget } from '../../core/answer-budget.js';
import { intentBytes, resolveIntentPage } from '../../core/intent-page.js';
import { CUTOVER_CHUNK, cutoverChunkOf } from '../../core/cutover-rules.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import type {
  CutoverRow,
  CutoverStepRow,
  OperationRow,
  RecordRow,
  ScopeRow,
} from '../../core/plan/transition.js';
import { FencegateError } from '../../errors.js';
import type * as T from '../../types.js';
import { intentPage } from '../intent-page.js';
import { decodeCursor, encodeCursor } from '../rows.js';
import { batchedOrAlone, PlannedStore } from '../planned-store.js';
import type * as Planned from '../planned-store.js';
import { cutoverRecordOf, recordStateOf, scopeStateOf } from '../plan-rows.js';
import type { Store, StoreCapabilities } from '../store.js';
import { readAuditPage } from './etcd-audit.js';
import { EtcdConnection } from './etcd-connection.js';
import {
  AUDIT_SLOTS,
  DEFAULT_ETCD_LIMITS,
  EtcdEngine,
  etcdTransactionCapabilities,
  type EtcdLimits,
} from './etcd-engine.js';
import { EtcdBatcher } from './etcd-group-commit.js';
import { EtcdKeys, prefixEnd } from './etcd-keys.js';
import { listCutovers, listTenantsWithOpenIntents } from './etcd-lists.js';
import { listRecordsPage } from './etcd-record-page.js';
import {
  auditPrunedHash,
  auditPrunedThrough,
  pruneAudit,
  pruneOperations,
  storeIdOf,
  deleteRollout,
  nextRolloutTenant,
} from './etcd-retention.js';
import { parseValue, scanPrefix } from './etcd-scan.js';
import { KeyCache } from '../optimistic/key-cache.js';
import {
  loadVerifiedCheckpoint,
  markFirstRunTokensMade,
  saveVerifiedCheckpoint,
} from './etcd-store-marks.js';
import { createTokensIfNone, listTokens, tokenPuts } from './etcd-tokens.js';
import { parseEtcdUrl } from './etcd-url.js';

export interface EtcdStoreOptions {
  /** etcd://host:port[,host:port…][?prefix=NAME] */
  url: string;
  clock?: Clock;
  groupCommit?: boolean;
  /** Deadline of one etcd call (per member tried). */
  callTimeoutMs?: number;
  /** Deadline of one store operation, below the HTTP client's 10 s. */
  operationTimeoutMs?: number;
  /** The servers' --max-txn-ops and --max-request-bytes, when not etcd's defaults. */
  limits?: Partial<EtcdLimits>;
  /**
   * Tests only: at most this many scopes per cutover chunk and names per page of a cutover's
   * listing, 1 to 1,000 (by default a chunk is what one Txn holds, and a page 1,000 names).
   */
  cutoverChunk?: number;
}

/** Intents per range read of a listing: each may hold a 256 KiB payload. */
const INTENTS_PER_READ = 16;

export class EtcdStore extends PlannedStore implements Store {
  readonly kind = 'etcd';
  readonly capabilities: StoreCapabilities;
  readonly #connection: EtcdConnection;
  readonly #keys: EtcdKeys;
  readonly #engine: EtcdEngine;
  readonly #clock: Clock;
  readonly #batcher: EtcdBatcher | null;
  /** Completions of a batch share Txns, with group commit or without. */
  readonly #completions: EtcdBatcher;
  /** The tests' bound on a chunk and a page, or null. */
  readonly #cutoverChunk: number | null;

  private constructor(options: EtcdStoreOptions) {
    super();
    this.#cutoverChunk =
      options.cutoverChunk === undefined ? null : cutoverChunkOf(options.cutoverChunk);
    const target = parseEtcdUrl(options.url);
    this.#clock = options.clock ?? systemClock;
    const operationTimeoutMs = options.operationTimeoutMs ?? 5_000;
    this.#connection = new EtcdConnection({
      hosts: target.hosts,
      callTimeoutMs: options.callTimeoutMs ?? 1_500,
      operationTimeoutMs,
    });
    this.#keys = new EtcdKeys(target.prefix);
    const limits = { ...DEFAULT_ETCD_LIMITS, ...options.limits };
    this.#engine = new EtcdEngine(
      this.#connection,
      this.#keys,
      new KeyCache(),
      this.#clock,
      limits,
    );
    this.#engine.sendWindowMs = operationTimeoutMs - 1_000;
    this.capabilities = { transaction: etcdTransactionCapabilities(limits) };
    this.#batcher =
      options.groupCommit === true ? new EtcdBatcher(this.#engine, this.#connection.target) : null;
    this.#completions = this.#batcher ?? new EtcdBatcher(this.#engine, this.#connection.target);
  }

  /** Opens the client and checks that a member answers (store_unavailable otherwise). */
  static async open(options: EtcdStoreOptions): Promise<EtcdStore> {
    const store = new EtcdStore(options);
    try {
      await store.ping();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The writes waiting for a group-commit batch (metrics); null without group commit. */
  commitQueueDepths(): QueueDepths | null {
    return this.#batcher?.depths() ?? null;
  }

  now(): Promise<number> {
    return Promise.resolve(this.#clock.now());
  }

  /** One Txn of its own, or a place in the next group commit. */
  protected apply<A>(write: Planned.PlannedWrite<A>): Promise<A> {
    const { tenant, plan, ranges, operationId } = write;
    return batchedOrAlone(this.#batcher, write, () =>
      this.#engine.run(tenant, plan, { ranges, operationId }),
    );
  }

  /** Submitted together, so the batcher packs them into as few Txns as fit. */
  protected applyTogether(
    writes: Planned.PlannedWrite<unknown>[],
  ): Promise<Planned.WriteSettlement[]> {
    return this.inWaves(writes, ({ tenant, plan }) => this.#completions.submit(tenant, plan));
  }

  protected planLimits(): Planned.PlanLimits {
    const { maxTxnOps, maxRequestBytes } = this.#engine.limits;
    return {
      // Two keys per claimed intent (the intent and its open head) and the audit key.
      maxClaims: Math.floor((maxTxnOps - 1) / 2),
      // Each claimed intent is written once whole and once as a small head; counting it twice
      // leaves the other half of the request to the heads, the keys and the audit entries.
      maxClaimBytes: Math.floor(maxRequestBytes / 4),
      // A page of cancellations writes the same two keys per intent, and the intent whole once,
      // beside the audit key and one more: the scope's row at a cancel's fence step, the cutover's
      // cursor in a rollback's page.
      maxCancels: Math.floor((maxTxnOps - 2) / 2),
      maxCancelBytes: Math.floor(maxRequestBytes / 4),
      // Per scope, read: its row, its step and a rollout's mark of it; written: those and its
      // fence grant. Once a chunk, read: the cutover, its cursor and the rollout; written: the
      // cursor and the audit key.
      cutoverChunk: Math.min(
        Math.floor((maxTxnOps - 3) / 3),
        Math.floor((maxTxnOps - 2) / 4),
        this.#cutoverChunk ?? CUTOVER_CHUNK,
      ),
      // A page of a range reads its names with their rows and compares none of them (the rows it
      // lists are checked again by the chunk that moves them): a Txn compares the cutover, its
      // cursor and the rollout, and writes the cursor and the cutover, whose one value holds its
      // list. A page of a list reads each name by key, as a chunk does.
      listPage: this.#cutoverChunk ?? CUTOVER_CHUNK,
      jobEventsPerWrite: maxTxnOps - 1,
    };
  }

  /** Entries up to the revision read now happened before the cutover's first step. */
  protected async cutoverStartPosition(): Promise<Planned.AuditPosition> {
    const revision = await this.#revision();
    return () => revision * AUDIT_SLOTS + AUDIT_SLOTS - 1;
  }

  async #get<T>(key: string): Promise<T | null> {
    const response = await this.#connection.range({ key: Buffer.from(key) });
    const kv = response.kvs[0];
    return kv === undefined ? null : (JSON.parse(kv.value.toString()) as T);
  }

  async getScope(tenant: string, scope: string): Promise<T.ScopeState | null> {
    const row = await this.#get<ScopeRow>(this.#keys.ref(tenant, { type: 'scope', scope }));
    return row === null ? null : scopeStateOf(scope, row);
  }

  async listScopes(tenant: string, query: T.ListScopesQuery): Promise<T.Page<T.ScopeState>> {
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    const family = this.#keys.family('s', tenant);
    const prefix = family + (query.prefix ?? '');
    const after = decodeCursor(query.cursor);
    const items: T.ScopeState[] = [];
    let more = false;
    for await (const kv of scanPrefix(
      this.#connection,
      prefix,
      after === '' || family + after < prefix ? '' : family + after,
    )) {
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push(
        scopeStateOf(
          kv.key.toString().slice(family.length),
          JSON.parse(kv.value.toString()) as ScopeRow,
        ),
      );
    }
    const last = items.at(-1);
    return { items, nextCursor: more && last ? encodeCursor(last.scope) : null };
  }

  async getRecord(tenant: string, scope: string, name: string): Promise<T.RecordState> {
    const row = await this.#get<RecordRow>(this.#keys.ref(tenant, { type: 'record', scope, name }));
    return recordStateOf(scope, name, row);
  }

  async listRecords(tenant: string, scope: string): Promise<T.RecordState[]> {
    const prefix = this.#keys.range(tenant, { type: 'scopeRecords', scope });
    const records: T.RecordState[] = [];
    for await (const kv of scanPrefix(this.#connection, prefix)) {
      const name = kv.key.toString().slice(prefix.length);
      records.push(recordStateOf(scope, name, JSON.parse(kv.value.toString()) as RecordRow));
    }
    return records;
  }

  listRecordsPage(
    tenant: string,
    scope: string,
    query: T.ListRecordsQuery,
    maxBytes: number,
  ): Promise<SizedPage> {
    return listRecordsPage(this.#connection, this.#keys, tenant, scope, query, maxBytes);
  }

  async getOperation(tenant: string, operationId: string): Promise<T.CommitResult | null> {
    const row = await this.#get<OperationRow>(
      this.#keys.ref(tenant, { type: 'operation', operationId }),
    );
    return row === null ? null : row.outcome;
  }

  /** Reads the family key by key, and stops once it holds the page and the intent past it. */
  async listIntents(
    tenant: string,
    query: T.ListIntentsQuery,
    maxBytes?: number,
  ): Promise<T.Page<T.Intent>> {
    const page = resolveIntentPage(query, maxBytes);
    const family = this.#keys.family('i', tenant);
    const read: T.Intent[] = [];
    const sizes: number[] = [];
    for await (const kv of scanPrefix(
      this.#connection,
      family,
      page.after === '' ? '' : family + page.after,
      INTENTS_PER_READ,
    )) {
      const intent = JSON.parse(kv.value.toString()) as T.Intent;
      if (page.scope !== undefined && intent.scope !== page.scope) continue;
      if (page.status !== undefined && intent.status !== page.status) continue;
      read.push(intent);
      sizes.push(intentBytes(intent));
      if (itemsWithinBudget(sizes, page.limit, page.maxBytes) < read.length) break;
    }
    return intentPage(read, page);
  }

  getIntent(tenant: string, effectKey: string): Promise<T.Intent | null> {
    return this.#get<T.Intent>(this.#keys.ref(tenant, { type: 'intent', effectKey }));
  }

  listTenantsWithOpenIntents(): Promise<string[]> {
    return listTenantsWithOpenIntents(this.#connection, this.#keys);
  }

  async countIntents(tenant: string | undefined): Promise<Partial<Record<T.IntentStatus, number>>> {
    const counts: Partial<Record<T.IntentStatus, number>> = {};
    for await (const kv of scanPrefix(this.#connection, this.#keys.family('i', tenant))) {
      const { status } = JSON.parse(kv.value.toString()) as T.Intent;
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }

  async listPolicies(tenant: string): Promise<T.Policy[]> {
    const policies: T.Policy[] = [];
    for await (const kv of scanPrefix(this.#connection, this.#keys.family('p', tenant))) {
      policies.push(JSON.parse(kv.value.toString()) as T.Policy);
    }
    return policies.sort(
      (a, b) =>
        a.registeredAt - b.registeredAt ||
        (a.version < b.version ? -1 : a.version > b.version ? 1 : 0),
    );
  }

  async getCutover(tenant: string, cutoverId: string): Promise<T.CutoverRecord | null> {
    const row = await this.#get<CutoverRow>(this.#keys.ref(tenant, { type: 'cutover', cutoverId }));
    if (row === null) return null;
    const prefix = this.#keys.range(tenant, { type: 'cutoverSteps', cutoverId });
    const steps = new Map<string, CutoverStepRow>();
    for await (const kv of scanPrefix(this.#connection, prefix)) {
      steps.set(kv.key.toString().slice(prefix.length), parseValue<CutoverStepRow>(kv));
    }
    return cutoverRecordOf(row, steps);
  }

  listCutovers(tenant: string, query: T.ListCutoversQuery): Promise<T.Page<T.CutoverSummary>> {
    return listCutovers(this.#connection, this.#keys, tenant, query);
  }

  async listJobs(tenant: string, scopes?: readonly string[]): Promise<T.JobRecord[]> {
    const wanted = scopes === undefined ? null : new Set(scopes);
    const jobs: T.JobRecord[] = [];
    for await (const kv of scanPrefix(this.#connection, this.#keys.family('j', tenant))) {
      const job = JSON.parse(kv.value.toString()) as T.JobRecord;
      if (wanted === null || wanted.has(job.scope)) jobs.push(job);
    }
    return jobs;
  }

  readAudit(
    tenant: string | undefined,
    query: T.AuditQuery,
    maxBytes?: number,
  ): Promise<T.AuditPage> {
    return readAuditPage(this.#connection, this.#keys.family('a', tenant), query, maxBytes);
  }

  async createToken(token: Omit<T.TokenRecord, 'createdAt'>): Promise<T.TokenRecord> {
    const record: T.TokenRecord = { ...token, createdAt: this.#clock.now() };
    const byHash = Buffer.from(this.#keys.token(token.hash));
    const byId = Buffer.from(this.#keys.tokenId(token.id));
    const result = await this.#connection.writeTxn({
      compare: [byHash, byId].map((key) => ({
        key,
        target: 'Create' as const,
        result: 'Equal' as const,
        create_revision: 0,
      })),
      success: tokenPuts(this.#keys, record),
    });
    if (!result.ok) throw this.#connection.writeError(result.error, undefined);
    if (!result.response.succeeded) {
      throw new FencegateError(
        'invalid_request',
        `a token with id ${token.id} or the same secret exists already`,
      );
    }
    return record;
  }

  findToken(hash: string): Promise<T.TokenRecord | null> {
    return this.#get<T.TokenRecord>(this.#keys.token(hash));
  }

  async deleteToken(id: string): Promise<boolean> {
    const byId = this.#keys.tokenId(id);
    const response = await this.#connection.range({ key: Buffer.from(byId) });
    const kv = response.kvs[0];
    if (kv === undefined) return false;
    const result = await this.#connection.writeTxn({
      compare: [
        {
          key: Buffer.from(byId),
          target: CompareTarget.Mod,
          result: CompareResult.Equal,
          mod_revision: kv.mod_revision,
        },
      ],
      success: [
        { request_delete_range: { key: Buffer.from(byId) } },
        { request_delete_range: { key: Buffer.from(this.#keys.token(kv.value.toString())) } },
      ],
    });
    if (!result.ok) throw this.#connection.writeError(result.error, undefined);
    return result.response.succeeded;
  }

  async countTokens(): Promise<number> {
    const key = Buffer.from(this.#keys.family('ti'));
    const response = await this.#connection.range({
      key,
      range_end: prefixEnd(key),
      count_only: true,
    });
    return Number(response.count);
  }

  listTokens(tenant?: string): Promise<T.TokenRecord[]> {
    return listTokens(this.#connection, this.#keys, tenant);
  }

  async createTokensIfNone(
    tokens: Omit<T.TokenRecord, 'createdAt'>[],
  ): Promise<T.TokenRecord[] | null> {
    const createdAt = this.#clock.now();
    const created = await createTokensIfNone(
      this.#connection,
      this.#keys,
      tokens.map((token) => ({ ...token, createdAt })),
    );
    // A store that has tokens had its first run, even one made before the mark existed.
    if (created === null) await markFirstRunTokensMade(this.#connection, this.#keys, createdAt);
    return created;
  }

  pruneOperations(createdBefore: number): Promise<number> {
    return pruneOperations(
      this.#connection,
      this.#keys,
      this.#engine.limits.maxTxnOps,
      createdBefore,
    );
  }

  pruneAudit(throughSeq: number, lastHash: string | null = null): Promise<number> {
    return pruneAudit(
      this.#connection,
      this.#keys,
      this.#engine.limits.maxTxnOps,
      throughSeq,
      lastHash,
    );
  }

  nextRolloutTenant(after: string): Promise<string | null> {
    return nextRolloutTenant(this.#connection, this.#keys, after);
  }

  deleteRollout(tenant: string, rolloutId: string): Promise<number> {
    return deleteRollout(
      this.#connection,
      this.#keys,
      this.#engine.limits.maxTxnOps,
      tenant,
      rolloutId,
    );
  }

  auditPrunedHash(): Promise<string | null> {
    return auditPrunedHash(this.#connection, this.#keys);
  }

  storeId(): Promise<string> {
    return storeIdOf(this.#connection, this.#keys);
  }

  auditPrunedThrough(): Promise<number> {
    return auditPrunedThrough(this.#connection, this.#keys);
  }

  saveVerifiedCheckpoint(lastSeq: number, checkpoint: string): Promise<void> {
    return saveVerifiedCheckpoint(this.#connection, this.#keys, lastSeq, checkpoint);
  }

  loadVerifiedCheckpoint(): Promise<string | null> {
    return loadVerifiedCheckpoint(this.#connection, this.#keys);
  }

  /**
   * An etcd watch on the open intents: a key created there (version 1) is an intent a commit
   * created, or one made due again; claims and deliveries, which rewrite or delete the key, wake
   * nobody.
   */
  async watchIntents(listener: (tenant: string) => void): Promise<() => Promise<void>> {
    const family = this.#keys.family('io');
    const watcher = await this.#connection.client.watch().prefix(family).create();
    watcher.on('put', (kv) => {
      if (kv.version !== '1') return;
      listener(kv.key.toString().slice(family.length).split('/')[0] ?? '');
    });
    // A lost stream is re-established by the client; meanwhile the dispatcher's poll finds work.
    watcher.on('error', () => undefined);
    return () => watcher.cancel();
  }

  async #revision(): Promise<number> {
    const key = Buffer.from(this.#keys.family('s'));
    const response = await this.#connection.range({ key, count_only: true });
    return Number(response.header.revision);
  }

  async ping(): Promise<void> {
    await this.#revision();
  }

  close(): Promise<void> {
    this.#connection.close();
    return Promise.resolve();
  }
}
