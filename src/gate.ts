/**
 * Fencegate: the library facade. Validates input with the shared core rules, then calls the store,
 * which decides everything about authority inside its own transaction. Every method is async, so
 * invalid input rejects the returned promise rather than throwing.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { FencegateApi, FencegateOpsApi, VerifyReport } from './api.js';
import { DEFAULT_MAX_DELIVERED_EFFECTS, DEFAULT_MAX_RECORDS } from './audit/background-verifier.js';
import { prunedLogCheckpoint, tenantPart } from './audit/stored-checkpoint.js';
import { verifyStore } from './audit/verify.js';
import type { Clock } from './core/clock.js';
import type { Caller } from './core/grant-token.js';
import { cancelEveryPage } from './core/cancel-intents-page.js';
import { DEFAULT_LIMITS, type Limits } from './core/limits.js';
import { requireCommitBatch } from './core/commit-batch.js';
import {
  requireName,
  requireTenant,
  validateAcquire,
  validateCommit,
  validateListCutovers,
  validateListIntents,
  validateListScopes,
  validateReason,
  validateCancelIntents,
  validateRelease,
  validateRenew,
  validateTakeover,
  type NormalizedCommit,
} from './core/validate.js';
import { validateAuditQuery } from './core/validate-audit.js';
import { requireCommitFits } from './core/transaction-limits.js';
import { validateListRecords } from './core/record-page.js';
import {
  readWithinBudget,
  validateRecordReads,
  type RecordReads,
  type RecordReadsResult,
} from './core/record-reads.js';
import { announceIntents, onIntents } from './store/intent-signal.js';
import { claimForTaker, offerIntentTaker, type IntentTaker } from './store/intent-takers.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';
import { buildCutoverReport } from './cutover/report.js';
import { FencegateError, isFencegateError } from './errors.js';
import { claimResult } from './core/plan/plan-intents.js';
import { runCutover } from './cutover/run.js';
import { sourcesOf, type SourceAccess } from './rollout/metric-sources.js';
import { Rollouts, type RolloutsApi } from './rollout/rollouts.js';
import {
  validateClaim,
  validateComplete,
  validateCompletions,
  validateCutover,
  validateJobEvents,
  validatePolicy,
} from './core/validate-ops.js';
import type {
  CancelIntentsRequest,
  CancelIntentsResult,
  AbandonRequest,
  AcquireRequest,
  AuditPage,
  AuditQuery,
  CancelRequest,
  CancelResult,
  ClaimIntentsRequest,
  CompleteAndClaimResult,
  CommitItemResult,
  CommitRequest,
  CommitResult,
  CompleteIntentRequest,
  CutoverReport,
  CutoverRequest,
  CutoverResult,
  CutoverSummary,
  DeleteScopeResult,
  Grant,
  Intent,
  IntentCompletion,
  IntentCompletionResult,
  JobEvent,
  ListCutoversQuery,
  ListIntentsQuery,
  ListRecordsQuery,
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
} from './types.js';

export const DEFAULT_TENANT = 'default';

export interface FencegateOptions {
  /** A store URL (`sqlite:PATH`, `sqlite::memory:`, `postgres://…`) or an opened Store. */
  store: string | Store;
  /** Store time for stores that use the host's clock (SQLite); tests pass a ManualClock. */
  clock?: Clock;
  /** The tenant this handle acts for; `forTenant` gives handles for others. */
  tenant?: string;
  limits?: Limits;
  /**
   * The external metric sources a rollout's gate may name: names any tenant may use, or each
   * name with the tenants that may (`tenants` absent: every tenant). The server sets them from
   * its configuration file, where their URLs are (docs/rollout.md, "External metrics").
   */
  metricSources?: readonly string[] | SourceAccess;
}

export class Fencegate implements FencegateApi, FencegateOpsApi {
  readonly store: Store;
  readonly tenant: string;
  readonly limits: Limits;
  readonly #ownsStore: boolean;
  /** The token this handle's requests are made with (the server's); absent in process. */
  readonly #caller: Caller | undefined;
  /** Operator: progressive rollouts of a policy, scope by scope (docs/rollout.md). */
  readonly rollouts: RolloutsApi;

  private constructor(
    store: Store,
    tenant: string,
    limits: Limits,
    ownsStore: boolean,
    readonly metricSources: SourceAccess,
    caller?: Caller,
  ) {
    this.store = store;
    this.tenant = requireTenant(tenant);
    this.limits = limits;
    this.#ownsStore = ownsStore;
    this.#caller = caller;
    this.rollouts = new Rollouts(store, this.tenant, caller, sourcesOf(metricSources, this.tenant));
  }

  static async open(options: FencegateOptions): Promise<Fencegate> {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const tenant = options.tenant ?? DEFAULT_TENANT;
    const sources = sourceAccess(options.metricSources);
    if (typeof options.store !== 'string') {
      return new Fencegate(options.store, tenant, limits, true, sources);
    }
    const store = await openStore(
      options.store,
      options.clock === undefined ? {} : { clock: options.clock },
    );
    return new Fencegate(store, tenant, limits, true, sources);
  }

  /**
   * A handle for another tenant on the same store; closing it leaves the store open. `caller` is
   * the token its requests are made with (the server passes the request's): grants are bound to
   * it and audit entries name it (core/grant-token.ts).
   */
  forTenant(tenant: string, caller?: Caller): Fencegate {
    return new Fencegate(this.store, tenant, this.limits, false, this.metricSources, caller);
  }

  async acquire(request: AcquireRequest): Promise<Grant> {
    return await this.store.acquire(
      this.tenant,
      validateAcquire(request, this.limits),
      this.#caller,
    );
  }

  async renew(request: RenewRequest): Promise<Grant> {
    return await this.store.renew(this.tenant, validateRenew(request, this.limits), this.#caller);
  }

  async release(request: ReleaseRequest): Promise<ReleaseResult> {
    return await this.store.release(this.tenant, validateRelease(request), this.#caller);
  }

  async cancelIntents(request: CancelIntentsRequest): Promise<CancelIntentsResult> {
    return await this.store.cancelIntents(
      this.tenant,
      validateCancelIntents(request),
      this.#caller,
    );
  }

  async cancelAllIntents(request: CancelIntentsRequest): Promise<string[]> {
    return await cancelEveryPage(
      (cursor) => this.cancelIntents({ ...request, ...(cursor === undefined ? {} : { cursor }) }),
      request.cursor,
    );
  }

  async takeover(scope: string, request: TakeoverRequest): Promise<Grant> {
    return await this.store.takeover(
      this.tenant,
      requireName(scope, 'scope'),
      validateTakeover(request, this.limits),
      this.#caller,
    );
  }

  async cancel(scope: string, request: CancelRequest = {}): Promise<CancelResult> {
    return await this.store.cancel(
      this.tenant,
      requireName(scope, 'scope'),
      validateReason(request),
      this.#caller,
    );
  }

  async deleteScope(scope: string, request: CancelRequest = {}): Promise<DeleteScopeResult> {
    return await this.store.deleteScope(
      this.tenant,
      requireName(scope, 'scope'),
      validateReason(request),
      this.#caller,
    );
  }

  async getScope(scope: string): Promise<ScopeState | null> {
    return await this.store.getScope(this.tenant, requireName(scope, 'scope'));
  }

  async listScopes(query: ListScopesQuery = {}): Promise<Page<ScopeState>> {
    return await this.store.listScopes(this.tenant, validateListScopes(query, this.limits));
  }

  async getRecord(scope: string, name: string): Promise<RecordState> {
    return await this.store.getRecord(
      this.tenant,
      requireName(scope, 'scope'),
      requireName(name, 'name'),
    );
  }

  async listRecords(scope: string): Promise<RecordState[]> {
    return await this.store.listRecords(this.tenant, requireName(scope, 'scope'));
  }

  async listRecordsPage(scope: string, query: ListRecordsQuery = {}): Promise<Page<RecordState>> {
    const { items, nextCursor } = await this.store.listRecordsPage(
      this.tenant,
      requireName(scope, 'scope'),
      validateListRecords(query, this.limits),
      this.limits.maxPageBytes,
    );
    return { items, nextCursor };
  }

  /**
   * Records by name and pages of records of one scope, answered within one byte budget
   * (core/record-reads.ts); not one snapshot.
   */
  async readRecords(scope: string, reads: RecordReads): Promise<RecordReadsResult> {
    const name = requireName(scope, 'scope');
    return await readWithinBudget(
      validateRecordReads(reads, this.limits),
      this.limits.maxPageBytes,
      {
        record: (record) => this.store.getRecord(this.tenant, name, record),
        // Each page gives the event loop back first: an embedded store reads a page
        // synchronously, and a request of many pages would otherwise hold every other request
        // (lease renewals, /healthz) until its last page.
        page: async (query, maxBytes) => {
          await nextTurn();
          return await this.store.listRecordsPage(this.tenant, name, query, maxBytes);
        },
      },
    );
  }

  async commit(request: CommitRequest): Promise<CommitResult> {
    const valid = validateCommit(request, this.limits);
    requireCommitFits(valid, this.store.capabilities.transaction);
    const { result, unannounced } = await this.#commitHandingOver(valid);
    if (unannounced) announceIntents(this.store, this.tenant);
    return result;
  }

  /**
   * Up to MAX_BATCH_COMMITS commits, each answered in order as `commit` would answer it alone:
   * its outcome, or the error it alone would throw (an invalid commit is refused on its own). They
   * go to the store together, so a store with group commit (the server's) applies them in one
   * batch: on SQLite one transaction and one sync; on PostgreSQL one statement, one transaction
   * and one sync for those of distinct scopes; on etcd as few Txns as its limits allow. A repeated
   * operationId is answered as a retry of the earlier item: its outcome, replayed, or
   * operation_id_conflict.
   */
  async commitMany(requests: readonly CommitRequest[]): Promise<CommitItemResult[]> {
    const prepared = requireCommitBatch(requests).map((request) => {
      try {
        const valid = validateCommit(request, this.limits);
        requireCommitFits(valid, this.store.capabilities.transaction);
        return valid;
      } catch (error) {
        if (isFencegateError(error)) return error;
        throw error;
      }
    });
    // An item whose operationId an earlier item carries is sent once that one settled, so it is
    // answered as its retry (replayed, or operation_id_conflict) on every store; the others are
    // sent at once, one after another without a wait, inside the store's `together`, so they
    // enter one group-commit batch even on a store that starts a batch with the first write.
    const earlier = new Map<string, Promise<unknown>>();
    let addedIntents = false;
    const send = () =>
      prepared.map((valid) => {
        if (isFencegateError(valid)) return Promise.reject(valid);
        const before = earlier.get(valid.operationId);
        const sent =
          before === undefined
            ? this.#commitHandingOver(valid)
            : before.catch(() => undefined).then(() => this.#commitHandingOver(valid));
        earlier.set(valid.operationId, sent);
        return sent.then(({ result, unannounced }) => {
          addedIntents ||= unannounced;
          return result;
        });
      });
    const settled = await Promise.allSettled(
      this.store.together === undefined ? send() : this.store.together(send),
    );
    const results = settled.map((answer): CommitItemResult =>
      answer.status === 'rejected'
        ? { ok: false, error: asCatalogError(answer.reason) }
        : { ok: true, result: answer.value },
    );
    if (addedIntents) announceIntents(this.store, this.tenant);
    return results;
  }

  /**
   * One valid commit, its intents claimed for a dispatcher of this process with room when there
   * is one (core/claim-at-commit.ts) and handed to it once committed. `unannounced`: it created
   * intents that no dispatcher took, so the others must hear of them.
   */
  async #commitHandingOver(
    valid: NormalizedCommit,
  ): Promise<{ result: CommitResult; unannounced: boolean }> {
    const handOver = claimForTaker(this.store, this.tenant, valid);
    let result: CommitResult;
    try {
      result = await this.store.commit(this.tenant, valid, this.#caller);
    } catch (error) {
      handOver?.(false);
      throw error;
    }
    const created = result.outcome === 'committed' && !result.replayed;
    const allTaken = handOver?.(created) ?? false;
    return { result, unannounced: created && valid.intents.length > 0 && !allTaken };
  }

  /**
   * Dispatchers of this process that take this tenant's intents as they are committed: `taker`
   * is offered room for the intents of each commit through any handle on this store. Returns the
   * function that withdraws it.
   */
  offerIntentTaker(taker: IntentTaker): () => void {
    return offerIntentTaker(this.store, this.tenant, taker);
  }

  /**
   * Calls `listener` when intents of this tenant are committed: through any handle on this store
   * in this process, and, on a store that carries the news across processes (PostgreSQL), by any
   * process. Returns the function that stops it. A dispatcher uses it to wake without polling.
   */
  watchIntents(listener: () => void): () => void {
    const tenant = this.tenant;
    const forTenant = (committed: string): void => {
      if (committed === tenant) listener();
    };
    const stopLocal = onIntents(this.store, forTenant);
    let stopRemote: (() => Promise<void>) | undefined;
    let stopped = false;
    // Best effort: while the watch cannot be set up, the dispatcher's poll still finds the work.
    this.store.watchIntents?.(forTenant).then(
      (stop) => {
        if (stopped) void stop();
        else stopRemote = stop;
      },
      () => undefined,
    );
    return () => {
      stopped = true;
      stopLocal();
      void stopRemote?.();
    };
  }

  async getOperation(operationId: string): Promise<CommitResult | null> {
    return await this.store.getOperation(this.tenant, requireName(operationId, 'operationId'));
  }

  async abandonOperation(operationId: string, request: AbandonRequest = {}): Promise<CommitResult> {
    return await this.store.abandonOperation(
      this.tenant,
      requireName(operationId, 'operationId'),
      validateReason(request),
      this.#caller,
    );
  }

  async listIntents(query: ListIntentsQuery = {}): Promise<Page<Intent>> {
    return await this.store.listIntents(
      this.tenant,
      validateListIntents(query, this.limits),
      this.limits.maxPageBytes,
    );
  }

  async getIntent(effectKey: string): Promise<Intent | null> {
    return await this.store.getIntent(this.tenant, requireName(effectKey, 'effectKey'));
  }

  async audit(query: AuditQuery = {}): Promise<AuditPage> {
    return await this.store.readAudit(
      this.tenant,
      validateAuditQuery(query, this.limits),
      this.limits.maxPageBytes,
    );
  }

  async claimIntents(request: ClaimIntentsRequest): Promise<Intent[]> {
    return await this.store.claimIntents(
      this.tenant,
      validateClaim(request, this.limits),
      this.limits.maxPageBytes,
    );
  }

  async completeIntent(effectKey: string, request: CompleteIntentRequest): Promise<Intent> {
    return await this.store.completeIntent(
      this.tenant,
      requireName(effectKey, 'effectKey'),
      validateComplete(request),
    );
  }

  /**
   * Records many completions in one store write: one answer per completion, in order. Each is
   * judged alone: a refusal (stale_claim, not_found, invalid_request) answers that completion only.
   */
  async completeIntents(
    completions: readonly IntentCompletion[],
  ): Promise<IntentCompletionResult[]> {
    const checked = validateCompletions(completions);
    const valid = checked.filter((c): c is IntentCompletion => !isFencegateError(c));
    const stored = valid.length === 0 ? [] : await this.store.completeIntents(this.tenant, valid);
    let next = 0;
    return checked.map((c) => (isFencegateError(c) ? { ok: false, error: c } : stored[next++]!));
  }

  /**
   * Records completions as completeIntents does, then claims as claimIntents does: in one store
   * write where the store can (SQLite), else one after the other. A dispatcher's finished
   * deliveries and its next batch then cost one transaction. The claim answers on its own.
   */
  async completeAndClaim(
    completions: readonly IntentCompletion[],
    claim: ClaimIntentsRequest,
  ): Promise<CompleteAndClaimResult> {
    const request = validateClaim(claim, this.limits);
    const { maxPageBytes } = this.limits;
    if (completions.length === 0) {
      return {
        completions: [],
        claim: await claimAnswer(this.store.claimIntents(this.tenant, request, maxPageBytes)),
      };
    }
    const checked = validateCompletions(completions);
    const valid = checked.filter((c): c is IntentCompletion => !isFencegateError(c));
    const stored =
      this.store.completeAndClaim === undefined || valid.length === 0
        ? // Nothing to send with the claim, or no store write that takes both.
          {
            completions:
              valid.length === 0 ? [] : await this.store.completeIntents(this.tenant, valid),
            claim: await claimAnswer(this.store.claimIntents(this.tenant, request, maxPageBytes)),
          }
        : await this.store.completeAndClaim(this.tenant, valid, request, maxPageBytes);
    let next = 0;
    return {
      completions: checked.map((c) =>
        isFencegateError(c) ? { ok: false, error: c } : stored.completions[next++]!,
      ),
      claim: stored.claim,
    };
  }

  async registerPolicy(
    request: RegisterPolicyRequest,
    registeredBy: string | null = null,
  ): Promise<{ policy: Policy; created: boolean }> {
    return await this.store.registerPolicy(this.tenant, validatePolicy(request), registeredBy);
  }

  async listPolicies(): Promise<Policy[]> {
    return await this.store.listPolicies(this.tenant);
  }

  async cutover(request: CutoverRequest): Promise<CutoverResult> {
    const valid = validateCutover(request, this.limits);
    return await runCutover(
      this.store,
      this.tenant,
      { ...valid, cutoverId: valid.cutoverId ?? randomUUID() },
      this.#caller,
    );
  }

  async cutoverReport(cutoverId: string): Promise<CutoverReport | null> {
    return await buildCutoverReport(this.store, this.tenant, requireName(cutoverId, 'cutoverId'));
  }

  async listCutovers(query: ListCutoversQuery = {}): Promise<Page<CutoverSummary>> {
    return await this.store.listCutovers(this.tenant, validateListCutovers(query, this.limits));
  }

  async recordJobEvents(events: JobEvent[]): Promise<void> {
    return await this.store.recordJobEvents(this.tenant, validateJobEvents({ events }));
  }

  async verify(): Promise<VerifyReport> {
    // Bounded in memory like the server's background verifier (background-verifier.ts): a
    // request never holds every record revision of a long history. `fencegate verify` checks all.
    // After audit retention, the history goes on from the checkpoint it pruned through.
    const pruned = await prunedLogCheckpoint(this.store);
    const { ok, checked, violations } = await verifyStore(this.store, {
      tenant: this.tenant,
      ...(pruned === null ? {} : { checkpoint: tenantPart(pruned, this.tenant) }),
      maxRecords: DEFAULT_MAX_RECORDS,
      maxDeliveredEffects: DEFAULT_MAX_DELIVERED_EFFECTS,
    });
    return { ok, checked, violations };
  }

  async close(): Promise<void> {
    if (this.#ownsStore) await this.store.close();
  }
}

/** A fault that is no catalog error, as internal_error: it keeps the fault as its cause. */
function asCatalogError(error: unknown): FencegateError {
  if (isFencegateError(error)) return error;
  return new FencegateError('internal_error', 'an unexpected error occurred', {}, { cause: error });
}

/** A claim's answer from its promise: the claimed intents, or its refusal. */
async function claimAnswer(claimed: Promise<Intent[]>): Promise<CompleteAndClaimResult['claim']> {
  try {
    return { ok: true, intents: await claimed };
  } catch (error) {
    return claimResult({ ok: false, error });
  }
}

/** The sources a handle's rollouts may name; a plain list of names is open to every tenant. */
function sourceAccess(sources: readonly string[] | SourceAccess | undefined): SourceAccess {
  if (sources === undefined) return {};
  if (!Array.isArray(sources)) return sources as SourceAccess;
  return Object.fromEntries((sources as readonly string[]).map((name) => [name, {}]));
}
