/**
 * The Store interface: what every adapter (SQLite, PostgreSQL, etcd) implements.
 *
 * It is shaped after etcd's transaction model, the least expressive of the three: every method is
 * one high-level atomic operation that checks and mutates in a single store transaction, and no
 * connection or transaction type leaks out. Nothing about authority is decided outside the store
 * transaction and nothing is cached: an adapter that cannot reach its store throws
 * `store_unavailable`, and one that loses the connection after sending a commit throws
 * `outcome_unknown`.
 *
 * Every method takes the tenant first; tenants are separate namespaces for scopes, records,
 * operations and intents. Inputs are already validated by `core/validate.ts`.
 *
 * Each mutating method appends its audit entries in the same transaction, for accepted and for
 * rejected attempts alike (see AuditEntry in types.ts).
 *
 * The methods that move authority or commit take the `caller`: the token the request was made
 * with, absent in process. A grant is bound to its worker token, the rules of who else may act on
 * it are core/grant-token.ts's, and the audit entries name the token.
 */
import type { QueueDepths } from './optimistic/fair-queue.js';
import type { Caller } from '../core/grant-token.js';
import type { RolloutChange } from '../core/plan/plan-rollout.js';
import type { RolloutDriverRow, RolloutRow, RolloutScopeRow } from '../core/rollout-rows.js';
import type { DriverClaim } from '../core/plan/plan-rollout-driver.js';
import type { SizedPage } from '../core/record-page.js';
import type { TransactionCapabilities } from '../core/transaction-limits.js';
import type { NormalizedCommit } from '../core/validate.js';
import type * as T from '../types.js';

/**
 * What a store declares that changes what the layers above it do. Only fields something reads
 * belong here: each one drives a decision.
 */
export interface StoreCapabilities {
  /** What one transaction can hold; the commit limits are derived from it (core/transaction-limits.ts). */
  transaction: TransactionCapabilities;
}

export interface Store {
  /** 'sqlite', 'postgres' or 'etcd'. */
  readonly kind: string;
  readonly capabilities: StoreCapabilities;

  /** The store's current time in ms: the clock that judges leases. */
  now(): Promise<number>;

  /**
   * How deep the queue in front of its group commit is (metrics); absent, or null, for a store
   * that does not batch.
   */
  commitQueueDepths?(): QueueDepths | null;

  /**
   * Runs `send`, which starts several writes without waiting for them (the commits of one
   * commitMany), so that they reach the group commit together: a store whose batcher starts a
   * batch as soon as a write arrives holds them until `send` returned, then batches them as one
   * group. Absent on a store that gathers the writes of one turn of the event loop anyway.
   */
  together?<T>(send: () => T): T;

  /**
   * Grants authority when no live holder exists: fence+1, holder, lease. The same holder with a
   * live lease gets its grant back (`reacquired: true`). Creates the scope on first use and pins
   * its policy. Throws lease_held, policy_mismatch, scope_deleted.
   */
  acquire(tenant: string, request: T.AcquireRequest, caller?: Caller): Promise<T.Grant>;
  /** Extends the lease of the current holder at the current fence. Throws stale_fence, not_holder, scope_not_found, scope_deleted. */
  renew(tenant: string, request: T.RenewRequest, caller?: Caller): Promise<T.Grant>;
  /** Clears the holder, keeping the fence. Conditional like renew; a second release is `alreadyReleased`. */
  release(tenant: string, request: T.ReleaseRequest, caller?: Caller): Promise<T.ReleaseResult>;
  /**
   * Operator: fence+1 regardless of the lease; creates or re-creates the scope. Throws
   * policy_mismatch, and scope_deleted to a worker token (only an operator re-creates a scope).
   */
  takeover(
    tenant: string,
    scope: string,
    request: T.TakeoverRequest,
    caller?: Caller,
  ): Promise<T.Grant>;
  /**
   * Operator: fence+1 and holder null in one transaction, then the pending intents of the scope
   * cancelled, a page per transaction (the first with the fence step); answers once all are.
   * Throws scope_not_found, scope_deleted.
   */
  cancel(
    tenant: string,
    scope: string,
    request: T.CancelRequest,
    caller?: Caller,
  ): Promise<T.CancelResult>;
  /**
   * The holder: the pending intents committed under fences from `committedFrom` up to its own
   * are cancelled; its fence and lease stay. Throws as renew does (stale_fence, not_holder, …).
   */
  cancelIntents(
    tenant: string,
    request: T.CancelIntentsRequest,
    caller?: Caller,
  ): Promise<T.CancelIntentsResult>;
  /** Operator: fence+1, status deleted, every record tombstoned (revision+1). Throws scope_not_found, scope_deleted. */
  deleteScope(
    tenant: string,
    scope: string,
    request: T.CancelRequest,
    caller?: Caller,
  ): Promise<T.DeleteScopeResult>;

  getScope(tenant: string, scope: string): Promise<T.ScopeState | null>;
  /** Ordered by scope name; the cursor is opaque. */
  listScopes(tenant: string, query: T.ListScopesQuery): Promise<T.Page<T.ScopeState>>;
  /** Never null: a record that never existed reads as `exists: false, revision: 0`. */
  getRecord(tenant: string, scope: string, name: string): Promise<T.RecordState>;
  /** Every record of the scope that exists or has a tombstone, ordered by name. */
  listRecords(tenant: string, scope: string): Promise<T.RecordState[]>;
  /**
   * One page of the scope's records (existing ones and tombstones) in name or revision order,
   * either direction, optionally only names with a prefix. Reads at most `limit` + 1 rows however
   * many records the scope holds and however deep the cursor (etcd's revision order reads every
   * key of the range, without values; see etcd-record-page.ts), and holds in memory at most about `maxBytes` of their values
   * (the page's byte budget, core/answer-budget.ts).
   */
  listRecordsPage(
    tenant: string,
    scope: string,
    query: T.ListRecordsQuery,
    maxBytes: number,
  ): Promise<SizedPage>;

  /**
   * The commit boundary: replay check, then checks 2 to 9 of SEMANTICS.md in order, then the
   * mutation, the stored outcome and the audit entry, atomically. A rejection is returned (and
   * stored and audited), not thrown. Throws operation_id_conflict when the operationId holds an
   * outcome for another request.
   */
  commit(tenant: string, request: NormalizedCommit, caller?: Caller): Promise<T.CommitResult>;
  /** The stored outcome exactly as first answered (`replayed: false`), or null when absent. */
  getOperation(tenant: string, operationId: string): Promise<T.CommitResult | null>;
  /**
   * Settles an operationId: its stored outcome when there is one, otherwise, atomically, the stored
   * and audited rejection operation_abandoned (core/abandon.ts), after which no commit with that
   * operationId applies, not even one already in flight.
   */
  abandonOperation(
    tenant: string,
    operationId: string,
    request: T.AbandonRequest,
    caller?: Caller,
  ): Promise<T.CommitResult>;

  /**
   * One page of intents by effect key, within `maxBytes` of intents past its first one (the
   * page's byte budget, core/intent-page.ts; DEFAULT_LIMITS.maxPageBytes when absent).
   */
  listIntents(
    tenant: string,
    query: T.ListIntentsQuery,
    maxBytes?: number,
  ): Promise<T.Page<T.Intent>>;
  getIntent(tenant: string, effectKey: string): Promise<T.Intent | null>;

  /**
   * Claims due intents: pending ones whose backoff has passed, unknown ones (reconciliation), and
   * claimed ones whose claim expired (a dispatcher died). Each claim moves the intent's claim
   * fence +1, so a paused dispatcher's later completion is stale_claim. Takes fewer than `limit`
   * (at least one) where they would pass `maxBytes` as answered (core/intent-page.ts;
   * DEFAULT_LIMITS.maxPageBytes when absent): the others stay due for the next claim.
   */
  claimIntents(
    tenant: string,
    request: T.ClaimIntentsRequest,
    maxBytes?: number,
  ): Promise<T.Intent[]>;
  /** Records a delivery outcome under the current claim fence. Throws stale_claim, not_found. */
  completeIntent(
    tenant: string,
    effectKey: string,
    request: T.CompleteIntentRequest,
  ): Promise<T.Intent>;
  /**
   * Records many completions in one store write, each planned as completeIntent plans it, in
   * order: each keeps its own audit entry and answer, and one completion's refusal never undoes
   * the others. Throws (nothing recorded) only when the store itself failed.
   */
  completeIntents(
    tenant: string,
    completions: readonly T.IntentCompletion[],
  ): Promise<T.IntentCompletionResult[]>;
  /**
   * Records completions as completeIntents does, then claims as claimIntents does, in one store
   * write: a dispatcher pays one transaction (one sync) for its finished deliveries and its next
   * batch. Each completion and the claim answer on their own. A store without it is called twice.
   */
  completeAndClaim?(
    tenant: string,
    completions: readonly T.IntentCompletion[],
    claim: T.ClaimIntentsRequest,
    maxBytes?: number,
  ): Promise<T.CompleteAndClaimResult>;
  /**
   * The tenants that have intents still to deliver or reconcile (pending, claimed or unknown), in
   * name order: what a dispatcher serving every tenant claims from.
   */
  listTenantsWithOpenIntents(): Promise<string[]>;
  /** Intents per status, for metrics; every tenant when `tenant` is undefined. */
  countIntents(tenant: string | undefined): Promise<Partial<Record<T.IntentStatus, number>>>;

  /** Registers an immutable policy version. Throws policy_conflict for another digest. */
  registerPolicy(
    tenant: string,
    request: T.RegisterPolicyRequest,
    registeredBy: string | null,
  ): Promise<{ policy: T.Policy; created: boolean }>;
  listPolicies(tenant: string): Promise<T.Policy[]>;
  /**
   * Plans a cutover: the scopes it moves to `toPolicy` and `holder` are fixed now. Idempotent by
   * cutoverId: the same request again changes nothing (cutover/run.ts then resumes it). Throws
   * operation_id_conflict when the cutoverId names another cutover, invalid_request when the
   * policy is not registered.
   */
  startCutover(tenant: string, request: T.CutoverRequest & { cutoverId: string }): Promise<void>;
  /**
   * Moves the next chunk of a planned cutover's scopes in one transaction, one durable step per
   * scope (fence+1 and its step row together, so no scope is ever bumped twice); how many moved.
   * 0 when none was left: the cutover is then marked completed. A rollback with cancelIntents
   * cancels the intents of the scopes it moved, a page a call, before it moves more (1 or more).
   */
  moveCutoverChunk(tenant: string, cutoverId: string, caller?: Caller): Promise<number>;
  getCutover(tenant: string, cutoverId: string): Promise<T.CutoverRecord | null>;
  /**
   * The tenant's cutovers, newest first (by startedAt, then cutoverId), with how many scopes each
   * covers and has moved. The cursor is the one of core/cutover-cursor.ts.
   */
  listCutovers(tenant: string, query: T.ListCutoversQuery): Promise<T.Page<T.CutoverSummary>>;
  /**
   * Changes a rollout's state in one transaction, a compare-and-swap on its revision: starts it (its
   * first step's cutover listed then), starts its next step or its rollback, pauses, resumes or
   * finishes it. Throws rollout_conflict when the rollout moved on or its state does not allow the
   * change, not_found for an unknown rollout. The cutovers it starts are moved by moveCutoverChunk.
   */
  changeRollout(tenant: string, change: RolloutChange): Promise<RolloutRow>;
  /** The tenant's rollouts, or the one named (none when it does not exist). */
  readRollouts(tenant: string, rolloutId?: string): Promise<RolloutRow[]>;
  /**
   * Takes or renews the driver lease of an active rollout for `ttlMs` of store time; null while
   * another holder's lease runs, or when the rollout is finished or gone.
   */
  claimRolloutDriver(
    tenant: string,
    rolloutId: string,
    holder: string,
    ttlMs: number,
  ): Promise<RolloutDriverRow | null>;
  /** Stores the gates' readings of a step; refused (rollout_conflict) once `claim` lost the lease. */
  recordRolloutGates(
    tenant: string,
    rolloutId: string,
    claim: DriverClaim,
    step: number,
    gateResults: T.RolloutGateResult[],
  ): Promise<void>;
  /** The rollout's driver lease and gate readings; null before a driver looked at it. */
  readRolloutDriver(tenant: string, rolloutId: string): Promise<RolloutDriverRow | null>;
  /** What the rollout did to each scope it moved or pinned, by scope name. */
  readRolloutScopes(
    tenant: string,
    rolloutId: string,
  ): Promise<{ scope: string; row: RolloutScopeRow }[]>;
  /** Records job lifecycle events; a job keeps its latest state. */
  recordJobEvents(tenant: string, events: T.JobEvent[]): Promise<void>;
  /** The latest state of every job of the given scopes (all jobs when absent). */
  listJobs(tenant: string, scopes?: readonly string[]): Promise<T.JobRecord[]>;

  /**
   * Audit entries in seq order; `tenant` undefined reads every tenant (verification). A page
   * holds at most `maxBytes` of entries past its first (core/audit-page.ts;
   * DEFAULT_LIMITS.maxPageBytes when absent) and then carries nextAfterSeq: a reader follows it
   * until it is null, whatever a page's length.
   */
  readAudit(
    tenant: string | undefined,
    query: T.AuditQuery,
    maxBytes?: number,
  ): Promise<T.AuditPage>;

  createToken(token: Omit<T.TokenRecord, 'createdAt'>): Promise<T.TokenRecord>;
  findToken(hash: string): Promise<T.TokenRecord | null>;
  /** true when a token was deleted. */
  deleteToken(id: string): Promise<boolean>;
  countTokens(): Promise<number>;
  /** Every token (one tenant's when `tenant` is given), oldest first. */
  listTokens(tenant?: string): Promise<T.TokenRecord[]>;
  /**
   * Stores the first-run `tokens` once per store, ever, atomically: only if the store never made
   * them before and holds no token at all (a store whose tokens were all revoked gets none). Of
   * several processes bootstrapping one empty store at once, exactly one gets the records, the
   * others null.
   */
  createTokensIfNone(tokens: Omit<T.TokenRecord, 'createdAt'>[]): Promise<T.TokenRecord[] | null>;

  /** Throws store_unavailable when the store cannot be reached. */
  ping(): Promise<void>;
  /**
   * Optional: calls `listener` with the tenant whenever intents are committed, by any process
   * (PostgreSQL: LISTEN/NOTIFY). Resolves once listening, with the function that stops it. In one
   * process the library announces commits itself (store/intent-signal.ts).
   */
  watchIntents?(listener: (tenant: string) => void): Promise<() => Promise<void>>;
  /**
   * Retention (see retention/retention.ts, which decides what may go): deletes the stored outcomes
   * created before `createdBefore` (store time, ms) in short transactions; the number deleted.
   */
  pruneOperations?(createdBefore: number): Promise<number>;
  /**
   * Deletes audit entries with seq <= throughSeq, first recording that the log starts after it and
   * `lastHash`, the hash of the entry at throughSeq, which a checkpoint ending there must match.
   */
  pruneAudit?(throughSeq: number, lastHash?: string | null): Promise<number>;
  /**
   * Retention and metrics of rollouts (retention/rollout-retention.ts): the first tenant, in name
   * order after `after` ('' for the first), that has rollout documents; null when there is none.
   */
  nextRolloutTenant?(after: string): Promise<string | null>;
  /**
   * Deletes a rollout's documents, what it did to each scope first and the rollout itself last, in
   * short transactions, so an interrupted deletion is finished by the next; how many went.
   * Retention calls it for finished rollouts only: nothing reads or writes them any more.
   */
  deleteRollout?(tenant: string, rolloutId: string): Promise<number>;
  /** The highest seq pruned from the audit log; 0 when nothing was. */
  auditPrunedThrough?(): Promise<number>;
  /** The hash of the entry at auditPrunedThrough, as pruneAudit recorded it; null if none. */
  auditPrunedHash?(): Promise<string | null>;
  /** The store's id: made once, at random, when the store was created. Verify checkpoints name it. */
  storeId?(): Promise<string>;
  /**
   * Keeps the verify checkpoint (as JSON) that audit retention prunes through, unless the one
   * kept already reaches `lastSeq` or further: a server continues verifying from it after the
   * pruned entries, across restarts.
   */
  saveVerifiedCheckpoint?(lastSeq: number, checkpoint: string): Promise<void>;
  /** The checkpoint saveVerifiedCheckpoint kept, as JSON; null when none was. */
  loadVerifiedCheckpoint?(): Promise<string | null>;
  close(): Promise<void>;
}
