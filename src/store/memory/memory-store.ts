/**
 * The in-memory reference store: a complete Store built on PlannedStore, in one process, gone
 * when the process ends. It is the shortest correct store: each write plans on the rows as they
 * are and applies its transition before anything else runs, so `expect` holds by construction.
 * Tests and adapter authors compare against it; it is no deployment (nothing survives a restart).
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import { wholeRowPut, type CutoverStepRow, type Ref } from '../../core/plan/transition.js';
import { jsonTextBytes } from '../../core/answer-budget.js';
import { auditPage, resolveAuditPage } from '../../core/audit-page.js';
import { resolveIntentPage } from '../../core/intent-page.js';
import {
  recordPage,
  resolveRecordPage,
  type SizedRecord,
  type SizedPage,
} from '../../core/record-page.js';
import { UNBOUNDED_TRANSACTIONS } from '../../core/transaction-limits.js';
import { CUTOVER_CHUNK, cutoverChunkOf } from '../../core/cutover-rules.js';
import {
  rolloutDriverKey,
  rolloutKey,
  rolloutRef,
  rolloutScopesPrefix,
} from '../../core/rollout-rows.js';
import { FencegateError } from '../../errors.js';
import type * as T from '../../types.js';
import { PlannedStore } from '../planned-store.js';
import type * as Planned from '../planned-store.js';
import {
  cutoverRecordOf,
  cutoverRowsPage,
  OPEN_INTENT_STATUSES,
  recordStateOf,
  scopeStateOf,
} from '../plan-rows.js';
import { intentPage } from '../intent-page.js';
import { decodeCursor, encodeCursor } from '../rows.js';
import type { Store, StoreCapabilities } from '../store.js';
import { MemorySnapshot } from './memory-snapshot.js';
import { byCodeUnit, MemoryTables } from './memory-tables.js';

export interface MemoryStoreOptions {
  clock?: Clock;
  /** Tests only: the scopes one cutover chunk moves, 1 to 1,000 (default 1,000). */
  cutoverChunk?: number;
}

const PLAN_LIMITS: Planned.PlanLimits = {
  maxClaims: Number.POSITIVE_INFINITY,
  cutoverChunk: CUTOVER_CHUNK,
  jobEventsPerWrite: Number.POSITIVE_INFINITY,
};

export class MemoryStore extends PlannedStore implements Store {
  readonly kind: string = 'memory';
  readonly capabilities: StoreCapabilities = { transaction: UNBOUNDED_TRANSACTIONS };
  /** The rows, audit log and tokens every read answers from. */
  protected readonly tables = new MemoryTables();
  readonly #clock: Clock;
  readonly #planLimits: Planned.PlanLimits;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    super();
    this.#clock = options.clock ?? systemClock;
    this.#planLimits = { ...PLAN_LIMITS, cutoverChunk: cutoverChunkOf(options.cutoverChunk) };
  }

  now(): Promise<number> {
    return Promise.resolve(this.#clock.now());
  }

  /** Plans on the rows as they are and applies the transition; a refusal is thrown once stored. */
  protected apply<A>(write: Planned.PlannedWrite<A>): Promise<A> {
    return this.whenOpen(() => {
      const answer = this.#applyNow(write);
      if (!answer.ok) throw answer.error;
      return answer.value;
    });
  }

  protected applyTogether(
    writes: Planned.PlannedWrite<unknown>[],
  ): Promise<Planned.WriteSettlement[]> {
    return this.whenOpen(() =>
      writes.map((write): Planned.WriteSettlement => {
        try {
          return this.#applyNow(write);
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  #applyNow<A>({ tenant, plan }: Planned.PlannedWrite<A>) {
    const transition = plan(new MemorySnapshot(tenant, this.#clock.now(), this.tables));
    // The tables keep whole rows: a cutover's put adds names to its stored list (only a cutover's
    // stored row is read: a read copies the row).
    for (const put of transition.put) {
      const whole = put.type === 'cutover' ? wholeRowPut(put, this.tables.get(tenant, put)) : put;
      this.tables.put(tenant, whole);
    }
    for (const ref of transition.delete ?? []) this.tables.delete(tenant, ref);
    for (const entry of transition.audit) this.tables.append(entry);
    return transition.answer;
  }

  protected planLimits(): Planned.PlanLimits {
    return this.#planLimits;
  }

  protected cutoverStartPosition(): Promise<Planned.AuditPosition> {
    return Promise.resolve(() => this.tables.lastSeq);
  }

  /** Runs `work` unless the store is closed (store_unavailable, as a store out of reach). */
  // eslint-disable-next-line @typescript-eslint/require-await -- a throw becomes a rejection
  protected async whenOpen<T>(work: () => T): Promise<T> {
    if (this.#closed)
      throw new FencegateError('store_unavailable', 'the in-memory store is closed');
    return work();
  }

  #rows<K extends 'scope' | 'record' | 'intent' | 'policy' | 'cutover' | 'job'>(
    tenant: string,
    type: K,
  ) {
    return [...this.tables.rowsOf(tenant, type)];
  }

  getScope(tenant: string, scope: string): Promise<T.ScopeState | null> {
    return this.whenOpen(() => {
      const row = this.tables.get(tenant, { type: 'scope', scope });
      return row === null ? null : scopeStateOf(scope, row);
    });
  }

  listScopes(tenant: string, query: T.ListScopesQuery): Promise<T.Page<T.ScopeState>> {
    return this.whenOpen(() => {
      const limit = query.limit ?? DEFAULT_LIST_LIMIT;
      const prefix = query.prefix ?? '';
      const after = decodeCursor(query.cursor);
      const scopes = this.#rows(tenant, 'scope')
        .map(({ ref, row }) => scopeStateOf(ref.type === 'scope' ? ref.scope : '', row))
        .filter(({ scope }) => scope.startsWith(prefix) && scope > after)
        .sort((a, b) => byCodeUnit(a.scope, b.scope));
      const items = scopes.slice(0, limit);
      const last = items.at(-1);
      return {
        items,
        nextCursor: scopes.length > limit && last ? encodeCursor(last.scope) : null,
      };
    });
  }

  getRecord(tenant: string, scope: string, name: string): Promise<T.RecordState> {
    return this.whenOpen(() =>
      recordStateOf(scope, name, this.tables.get(tenant, { type: 'record', scope, name })),
    );
  }

  listRecords(tenant: string, scope: string): Promise<T.RecordState[]> {
    return this.whenOpen(() => this.#records(tenant, scope).map(({ record }) => record));
  }

  #records(tenant: string, scope: string): SizedRecord[] {
    return this.#rows(tenant, 'record')
      .flatMap(({ ref, row }) =>
        ref.type === 'record' && ref.scope === scope
          ? [{ record: recordStateOf(scope, ref.name, row), bytes: jsonTextBytes(row.valueJson) }]
          : [],
      )
      .sort((a, b) => byCodeUnit(a.record.name, b.record.name));
  }

  listRecordsPage(
    tenant: string,
    scope: string,
    query: T.ListRecordsQuery,
    maxBytes: number,
  ): Promise<SizedPage> {
    return this.whenOpen(() => {
      const page = resolveRecordPage(query, maxBytes);
      const sign = page.descending ? -1 : 1;
      const order = (
        a: { revision: number; name: string },
        b: { revision: number; name: string },
      ) =>
        sign *
        ((page.order === 'revision' ? a.revision - b.revision : 0) || byCodeUnit(a.name, b.name));
      const records = this.#records(tenant, scope)
        .filter(({ record }) => record.name.startsWith(page.prefix))
        .filter(({ record }) => page.position === null || order(record, page.position) > 0)
        .sort((a, b) => order(a.record, b.record));
      return recordPage(records.slice(0, page.limit + 1), page);
    });
  }

  getOperation(tenant: string, operationId: string): Promise<T.CommitResult | null> {
    return this.whenOpen(() => {
      const row = this.tables.get(tenant, { type: 'operation', operationId });
      return row === null ? null : row.outcome;
    });
  }

  listIntents(
    tenant: string,
    query: T.ListIntentsQuery,
    maxBytes?: number,
  ): Promise<T.Page<T.Intent>> {
    return this.whenOpen(() => {
      const page = resolveIntentPage(query, maxBytes);
      const intents = this.#intents(tenant).filter(
        (intent) =>
          intent.effectKey > page.after &&
          (page.scope === undefined || intent.scope === page.scope) &&
          (page.status === undefined || intent.status === page.status),
      );
      return intentPage(intents.slice(0, page.limit + 1), page);
    });
  }

  #intents(tenant: string): T.Intent[] {
    return this.#rows(tenant, 'intent')
      .map(({ row }) => structuredClone(row))
      .sort((a, b) => byCodeUnit(a.effectKey, b.effectKey));
  }

  getIntent(tenant: string, effectKey: string): Promise<T.Intent | null> {
    return this.whenOpen(() => this.tables.get(tenant, { type: 'intent', effectKey }));
  }

  listTenantsWithOpenIntents(): Promise<string[]> {
    return this.whenOpen(() =>
      this.tables
        .tenants()
        .filter((tenant) =>
          this.#rows(tenant, 'intent').some(({ row }) => OPEN_INTENT_STATUSES.has(row.status)),
        ),
    );
  }

  countIntents(tenant: string | undefined): Promise<Partial<Record<T.IntentStatus, number>>> {
    return this.whenOpen(() => {
      const counts: Partial<Record<T.IntentStatus, number>> = {};
      for (const each of tenant === undefined ? this.tables.tenants() : [tenant]) {
        for (const { row } of this.tables.rowsOf(each, 'intent')) {
          counts[row.status] = (counts[row.status] ?? 0) + 1;
        }
      }
      return counts;
    });
  }

  listPolicies(tenant: string): Promise<T.Policy[]> {
    return this.whenOpen(() =>
      this.#rows(tenant, 'policy')
        .map(({ row }) => structuredClone(row))
        .sort((a, b) => a.registeredAt - b.registeredAt || byCodeUnit(a.version, b.version)),
    );
  }

  getCutover(tenant: string, cutoverId: string): Promise<T.CutoverRecord | null> {
    return this.whenOpen(() => {
      const row = this.tables.get(tenant, { type: 'cutover', cutoverId });
      if (row === null) return null;
      return cutoverRecordOf(row, this.#steps(tenant, cutoverId));
    });
  }

  #steps(tenant: string, cutoverId: string): Map<string, CutoverStepRow> {
    const steps = new Map<string, CutoverStepRow>();
    for (const { ref, row } of this.tables.rowsOf(tenant, 'cutoverStep')) {
      if (ref.type === 'cutoverStep' && ref.cutoverId === cutoverId) steps.set(ref.scope, row);
    }
    return steps;
  }

  async listCutovers(
    tenant: string,
    query: T.ListCutoversQuery,
  ): Promise<T.Page<T.CutoverSummary>> {
    const cutovers = await this.whenOpen(() => this.#rows(tenant, 'cutover').map(({ row }) => row));
    return cutoverRowsPage(cutovers, query, query.limit ?? DEFAULT_LIST_LIMIT, (cutoverId) =>
      Promise.resolve(this.#steps(tenant, cutoverId).size),
    );
  }

  listJobs(tenant: string, scopes?: readonly string[]): Promise<T.JobRecord[]> {
    // A rollout's report asks for every scope it touched: a set keeps that linear.
    const wanted = scopes === undefined ? undefined : new Set(scopes);
    return this.whenOpen(() =>
      this.#rows(tenant, 'job')
        .map(({ row }) => structuredClone(row))
        .filter((job) => wanted === undefined || wanted.has(job.scope))
        .sort((a, b) => byCodeUnit(a.jobId, b.jobId)),
    );
  }

  readAudit(
    tenant: string | undefined,
    query: T.AuditQuery,
    maxBytes?: number,
  ): Promise<T.AuditPage> {
    return this.whenOpen(() => {
      const page = resolveAuditPage(query, maxBytes);
      const found = this.tables.audit.filter(
        (entry) =>
          entry.seq > page.afterSeq &&
          (tenant === undefined || entry.tenant === tenant) &&
          (page.scope === undefined || entry.scope === page.scope) &&
          (page.kind === undefined || entry.kind === page.kind) &&
          (page.outcome === undefined || entry.outcome === page.outcome),
      );
      return auditPage(
        found.slice(0, page.limit + 1).map((entry) => structuredClone(entry)),
        page,
      );
    });
  }

  createToken(token: Omit<T.TokenRecord, 'createdAt'>): Promise<T.TokenRecord> {
    return this.whenOpen(() => {
      const taken = [...this.tables.tokens.values()].some(
        ({ id, hash }) => id === token.id || hash === token.hash,
      );
      if (taken) {
        throw new FencegateError(
          'invalid_request',
          `a token with id ${token.id} or the same secret exists already`,
        );
      }
      return this.#insertToken(token);
    });
  }

  #insertToken(token: Omit<T.TokenRecord, 'createdAt'>): T.TokenRecord {
    const record = { ...token, createdAt: this.#clock.now() };
    this.tables.tokens.set(token.id, record);
    return structuredClone(record);
  }

  createTokensIfNone(tokens: Omit<T.TokenRecord, 'createdAt'>[]): Promise<T.TokenRecord[] | null> {
    return this.whenOpen(() => {
      // Once per store, ever: a store whose tokens were all revoked gets no new ones.
      if (this.tables.firstRunTokensMade) return null;
      this.tables.firstRunTokensMade = true;
      if (this.tables.tokens.size > 0) return null;
      return tokens.map((token) => this.#insertToken(token));
    });
  }

  findToken(hash: string): Promise<T.TokenRecord | null> {
    return this.whenOpen(() => {
      const token = [...this.tables.tokens.values()].find((each) => each.hash === hash);
      return token === undefined ? null : structuredClone(token);
    });
  }

  deleteToken(id: string): Promise<boolean> {
    return this.whenOpen(() => this.tables.tokens.delete(id));
  }

  countTokens(): Promise<number> {
    return this.whenOpen(() => this.tables.tokens.size);
  }

  listTokens(tenant?: string): Promise<T.TokenRecord[]> {
    return this.whenOpen(() =>
      [...this.tables.tokens.values()]
        .filter((token) => tenant === undefined || token.tenant === tenant)
        .sort((a, b) => a.createdAt - b.createdAt || byCodeUnit(a.id, b.id))
        .map((token) => structuredClone(token)),
    );
  }

  ping(): Promise<void> {
    return this.whenOpen(() => undefined);
  }

  pruneOperations(createdBefore: number): Promise<number> {
    return this.whenOpen(() => {
      let deleted = 0;
      for (const tenant of this.tables.tenants()) {
        const old: Ref[] = [];
        for (const { ref, row } of this.tables.rowsOf(tenant, 'operation')) {
          if (row.at < createdBefore) old.push(ref);
        }
        for (const ref of old) this.tables.delete(tenant, ref);
        deleted += old.length;
      }
      return deleted;
    });
  }

  pruneAudit(throughSeq: number, lastHash: string | null = null): Promise<number> {
    return this.whenOpen(() => {
      const tables = this.tables;
      if (throughSeq > tables.auditPrunedThrough) {
        tables.auditPrunedThrough = throughSeq;
        tables.auditPrunedHash = lastHash;
      }
      const kept = tables.audit.filter((entry) => entry.seq > throughSeq);
      const deleted = tables.audit.length - kept.length;
      tables.audit.splice(0, tables.audit.length, ...kept);
      return deleted;
    });
  }

  nextRolloutTenant(after: string): Promise<string | null> {
    return this.whenOpen(
      () =>
        this.tables
          .tenants()
          .find((tenant) => tenant > after && !this.tables.rowsOf(tenant, 'rollout').next().done) ??
        null,
    );
  }

  /** What the rollout did to each scope, its driver's lease, then the rollout: how many went. */
  deleteRollout(tenant: string, rolloutId: string): Promise<number> {
    return this.whenOpen(() => {
      const scopes = rolloutScopesPrefix(rolloutId);
      const gone: Ref[] = [];
      for (const { ref } of this.tables.rowsOf(tenant, 'rollout')) {
        if (ref.type === 'rollout' && ref.key.startsWith(scopes)) gone.push(ref);
      }
      for (const key of [rolloutDriverKey(rolloutId), rolloutKey(rolloutId)]) {
        if (this.tables.get(tenant, rolloutRef(key)) !== null) gone.push(rolloutRef(key));
      }
      for (const ref of gone) this.tables.delete(tenant, ref);
      return gone.length;
    });
  }

  auditPrunedThrough(): Promise<number> {
    return this.whenOpen(() => this.tables.auditPrunedThrough);
  }

  auditPrunedHash(): Promise<string | null> {
    return this.whenOpen(() => this.tables.auditPrunedHash);
  }

  storeId(): Promise<string> {
    return this.whenOpen(() => this.tables.storeId);
  }

  saveVerifiedCheckpoint(lastSeq: number, checkpoint: string): Promise<void> {
    return this.whenOpen(() => {
      const kept = this.tables.verified;
      if (kept === null || lastSeq > kept.lastSeq) this.tables.verified = { lastSeq, checkpoint };
    });
  }

  loadVerifiedCheckpoint(): Promise<string | null> {
    return this.whenOpen(() => this.tables.verified?.checkpoint ?? null);
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}
