/**
 * The mutating operations of a Store, mapped onto core's plans once for every store that loads →
 * plans → applies (SQLite, etcd, the in-memory reference store). A store extends this class and
 * provides how it applies one planned write (`apply`), how it applies several in one store write
 * (`applyTogether`), its plan limits and the audit position a cutover starts after; its reads stay
 * its own. Which operation a write is, the ranges its plan reads and its operationId travel with
 * it, so a store chooses per operation what it batches and what it loads first; nothing here
 * decides anything core does not.
 */
import { planAbandon, planCommit } from '../core/plan/plan-commit.js';
import {
  planCutoverChunk,
  planCutoverStart,
  planRegisterPolicy,
} from '../core/plan/plan-cutover.js';
import { planJobEvents } from '../core/plan/plan-jobs.js';
import {
  completionResult,
  planClaim,
  planCompletion,
  planCompletions,
} from '../core/plan/plan-intents.js';
import {
  planAcquire,
  planCancelIntents,
  planDeleteScope,
  planRelease,
  planRenew,
  planTakeover,
} from '../core/plan/plan-leases.js';
import { planCancel, planCancelPage } from '../core/plan/plan-scope-cancel.js';
import type { CancelPageBounds } from '../core/cancel-intents-page.js';
import type { Caller } from '../core/grant-token.js';
import { planRolloutChange, type RolloutChange } from '../core/plan/plan-rollout.js';
import { planReadRollouts, planReadRolloutScopes } from '../core/plan/plan-rollout-reads.js';
import {
  planClaimDriver,
  planReadDriver,
  planRecordGates,
  type DriverClaim,
} from '../core/plan/plan-rollout-driver.js';
import {
  ROLLOUTS_PREFIX,
  rolloutScopesPrefix,
  type RolloutDriverRow,
  type RolloutRow,
  type RolloutScopeRow,
} from '../core/rollout-rows.js';
import type { RangeRef, Snapshot, Transition } from '../core/plan/transition.js';
import type { NormalizedCommit } from '../core/validate.js';
import type * as T from '../types.js';
import type { Store } from './store.js';

/**
 * The operations a store with group commit joins into batches: the small, frequent writes. An
 * operation whose plan lists a range (cancel, delete, claims, cutover steps) always goes alone.
 */
const GROUP_COMMITTED: ReadonlySet<PlannedOperation> = new Set<PlannedOperation>([
  'acquire',
  'renew',
  'release',
  'takeover',
  'commit',
  'completeIntent',
]);

/** Whether a write joins a batch when its store runs group commit. */
export function joinsBatch(write: Pick<PlannedWrite<unknown>, 'operation' | 'ranges'>): boolean {
  return write.ranges === undefined && GROUP_COMMITTED.has(write.operation);
}

/** Where a store with group commit sends the writes that may share a batch. */
export interface WriteBatcher {
  submit<A>(tenant: string, plan: Plan<A>, operationId?: string): Promise<A>;
}

/**
 * Sends a write to the batcher's next group commit when it may join one, else runs it alone: the
 * choice every store with group commit makes (no batcher: always alone).
 */
export function batchedOrAlone<A>(
  batcher: WriteBatcher | null,
  write: PlannedWrite<A>,
  alone: () => Promise<A>,
): Promise<A> {
  if (batcher !== null && joinsBatch(write)) {
    return batcher.submit(write.tenant, write.plan, write.operationId);
  }
  return alone();
}

/** The Store methods this class maps onto plans. */
export type PlannedOperation =
  | 'acquire'
  | 'renew'
  | 'release'
  | 'takeover'
  | 'cancel'
  | 'cancelIntents'
  | 'deleteScope'
  | 'commit'
  | 'abandonOperation'
  | 'claimIntents'
  | 'completeIntent'
  | 'registerPolicy'
  | 'startCutover'
  | 'moveCutoverChunk'
  | 'recordJobEvents'
  | 'changeRollout'
  | 'readRollouts'
  | 'readRolloutScopes'
  | 'claimRolloutDriver'
  | 'recordRolloutGates'
  | 'readRolloutDriver';

export type Plan<A> = (snapshot: Snapshot) => Transition<A>;

/** One write to apply: its plan answers (a refusal is an answer to throw once applied). */
export interface PlannedWrite<A> {
  operation: PlannedOperation;
  tenant: string;
  plan: Plan<A>;
  /** Ranges the plan reads as a whole: a store that reads before it plans loads them first. */
  ranges?: RangeRef[];
  /** The commit's operationId: a store that resends a lost write uses it to find the outcome. */
  operationId?: string;
  /** The row a write of a batch changes: two writes of one batch with the same key apply in order. */
  key?: string;
}

/** A write's settlement in a batch: its answer, or the fault that stopped it. */
export type WriteSettlement =
  { ok: true; value: unknown } | { ok: false; error: unknown } | PromiseSettledResult<unknown>;

/** What one store transaction holds, as the plans that fill one see it. */
export interface PlanLimits {
  /** The most intents one claim takes (infinite when the transaction is unbounded). */
  maxClaims: number;
  /** The most payload bytes one claim rewrites (absent when the transaction is unbounded). */
  maxClaimBytes?: number;
  /**
   * The most intents one page of cancelIntents cancels, below CANCEL_INTENTS_PAGE (absent when the
   * transaction is unbounded).
   */
  maxCancels?: number;
  /** The most payload bytes one page of cancelIntents rewrites (absent when unbounded). */
  maxCancelBytes?: number;
  /** The scopes one cutover chunk moves. */
  cutoverChunk: number;
  /**
   * The names one page of a cutover's listing reads from a range (a prefix's scopes, a rollout's
   * marks, their rows read with them); `cutoverChunk` when absent.
   */
  listPage?: number;
  /** The job events one transaction records. */
  jobEventsPerWrite: number;
}

/** How a store finds the audit position a cutover starts after, from the snapshot it plans on. */
export type AuditPosition = (snapshot: Snapshot) => number;

export abstract class PlannedStore implements Pick<Store, PlannedOperation | 'completeIntents'> {
  /** Applies one write in a store transaction of its own or a batch's; throws a refusal. */
  protected abstract apply<A>(write: PlannedWrite<A>): Promise<A>;
  /** Applies the writes in order in as few store writes as fit, each settled on its own. */
  protected abstract applyTogether(writes: PlannedWrite<unknown>[]): Promise<WriteSettlement[]>;
  protected abstract planLimits(): PlanLimits;
  /**
   * The audit seq every entry before the cutover's first step is at or below: read under the
   * write lock by a store that holds one, or before the transaction by a store that compares.
   */
  protected abstract cutoverStartPosition(): Promise<AuditPosition>;

  /**
   * Submits writes to a batching store's queue in waves: writes of distinct keys together, and a
   * write of a key already in the wave after that wave has settled. A batcher runs its batches
   * concurrently and defers a job whose rows are taken, so without the wait a later completion of
   * one intent could be applied before an earlier one.
   */
  protected async inWaves(
    writes: readonly PlannedWrite<unknown>[],
    submit: (write: PlannedWrite<unknown>) => Promise<unknown>,
  ): Promise<WriteSettlement[]> {
    const settled: WriteSettlement[] = [];
    let wave: Promise<unknown>[] = [];
    let keys = new Set<string | undefined>();
    for (const write of writes) {
      if (keys.has(write.key)) {
        settled.push(...(await Promise.allSettled(wave)));
        wave = [];
        keys = new Set();
      }
      keys.add(write.key);
      wave.push(submit(write));
    }
    settled.push(...(await Promise.allSettled(wave)));
    return settled;
  }

  acquire(tenant: string, request: T.AcquireRequest, caller?: Caller): Promise<T.Grant> {
    return this.apply({
      operation: 'acquire',
      tenant,
      plan: (s) => planAcquire(s, request, caller),
    });
  }

  renew(tenant: string, request: T.RenewRequest, caller?: Caller): Promise<T.Grant> {
    return this.apply({ operation: 'renew', tenant, plan: (s) => planRenew(s, request, caller) });
  }

  release(tenant: string, request: T.ReleaseRequest, caller?: Caller): Promise<T.ReleaseResult> {
    return this.apply({
      operation: 'release',
      tenant,
      plan: (s) => planRelease(s, request, caller),
    });
  }

  takeover(
    tenant: string,
    scope: string,
    request: T.TakeoverRequest,
    caller?: Caller,
  ): Promise<T.Grant> {
    return this.apply({
      operation: 'takeover',
      tenant,
      plan: (s) => planTakeover(s, scope, request, caller),
    });
  }

  /**
   * The fence step with the first page of the scope's intents in one transaction, then a
   * transaction per later page until none is left (core/plan/plan-scope-cancel.ts); answers once
   * every page is done, with the intents all of them cancelled.
   */
  async cancel(
    tenant: string,
    scope: string,
    request: T.CancelRequest,
    caller?: Caller,
  ): Promise<T.CancelResult> {
    const bounds = this.#cancelBounds();
    // No range is read first: each page lists the scope's intents from its cursor on.
    let page = await this.apply({
      operation: 'cancel',
      tenant,
      plan: (s) => planCancel(s, scope, request.reason, caller, bounds),
    });
    const { fence } = page;
    let cancelledIntents = page.cancelledIntents;
    while (page.nextCursor !== null) {
      const cursor = page.nextCursor;
      page = await this.apply({
        operation: 'cancel',
        tenant,
        plan: (s) => planCancelPage(s, scope, fence, cursor, bounds),
      });
      cancelledIntents += page.cancelledIntents;
    }
    return { fence, cancelledIntents };
  }

  cancelIntents(
    tenant: string,
    request: T.CancelIntentsRequest,
    caller?: Caller,
  ): Promise<T.CancelIntentsResult> {
    const bounds = this.#cancelBounds();
    return this.apply({
      operation: 'cancelIntents',
      tenant,
      plan: (s) => planCancelIntents(s, request, caller, bounds),
    });
  }

  /** What one transaction of this store holds of a page of cancellations. */
  #cancelBounds(): CancelPageBounds {
    const { maxCancels, maxCancelBytes } = this.planLimits();
    return { maxCancels, maxCancelBytes };
  }

  deleteScope(
    tenant: string,
    scope: string,
    request: T.CancelRequest,
    caller?: Caller,
  ): Promise<T.DeleteScopeResult> {
    return this.apply({
      operation: 'deleteScope',
      tenant,
      plan: (s) => planDeleteScope(s, scope, request.reason, caller),
      ranges: [{ type: 'scopeRecords', scope }],
    });
  }

  commit(tenant: string, request: NormalizedCommit, caller?: Caller): Promise<T.CommitResult> {
    return this.apply({
      operation: 'commit',
      tenant,
      plan: (s) => planCommit(s, request, caller),
      operationId: request.operationId,
    });
  }

  abandonOperation(
    tenant: string,
    operationId: string,
    request: T.AbandonRequest,
    caller?: Caller,
  ): Promise<T.CommitResult> {
    return this.apply({
      operation: 'abandonOperation',
      tenant,
      plan: (s) => planAbandon(s, operationId, request.reason, caller),
    });
  }

  claimIntents(
    tenant: string,
    request: T.ClaimIntentsRequest,
    maxBytes?: number,
  ): Promise<T.Intent[]> {
    return this.apply(this.claimWrite(tenant, request, maxBytes));
  }

  /** A claim as a write, for a store that applies it together with completions. */
  protected claimWrite(
    tenant: string,
    request: T.ClaimIntentsRequest,
    maxBytes?: number,
  ): PlannedWrite<T.Intent[]> {
    const { maxClaims, maxClaimBytes } = this.planLimits();
    return {
      operation: 'claimIntents',
      tenant,
      plan: (s) => planClaim(s, request, { maxClaims, maxBytes, maxClaimBytes }),
      ranges: [{ type: 'openIntents' }],
    };
  }

  completeIntent(
    tenant: string,
    effectKey: string,
    request: T.CompleteIntentRequest,
  ): Promise<T.Intent> {
    return this.apply({
      operation: 'completeIntent',
      tenant,
      plan: (s) => planCompletion(s, effectKey, request),
      key: effectKey,
    });
  }

  async completeIntents(
    tenant: string,
    completions: readonly T.IntentCompletion[],
  ): Promise<T.IntentCompletionResult[]> {
    return (await this.applyTogether(this.completionWrites(tenant, completions))).map(
      completionResult,
    );
  }

  /** Completions as writes, in order, each keyed by its intent. */
  protected completionWrites(
    tenant: string,
    completions: readonly T.IntentCompletion[],
  ): PlannedWrite<unknown>[] {
    const plans = planCompletions(completions);
    return completions.map((completion, i) => ({
      operation: 'completeIntent',
      tenant,
      plan: plans[i]!,
      key: completion.effectKey,
    }));
  }

  registerPolicy(
    tenant: string,
    request: T.RegisterPolicyRequest,
    registeredBy: string | null,
  ): Promise<{ policy: T.Policy; created: boolean }> {
    return this.apply({
      operation: 'registerPolicy',
      tenant,
      plan: (s) => planRegisterPolicy(s, request, registeredBy),
    });
  }

  async startCutover(
    tenant: string,
    request: T.CutoverRequest & { cutoverId: string },
  ): Promise<void> {
    const position = await this.cutoverStartPosition();
    await this.apply({
      operation: 'startCutover',
      tenant,
      plan: (s) => planCutoverStart(s, request, position(s)),
    });
  }

  /** Each chunk, and each page of a listing, is a transaction of its own: other writers run between them. */
  moveCutoverChunk(tenant: string, cutoverId: string, caller?: Caller): Promise<number> {
    const { cutoverChunk, listPage = cutoverChunk } = this.planLimits();
    const bounds = this.#cancelBounds();
    return this.apply({
      operation: 'moveCutoverChunk',
      tenant,
      plan: (s) => planCutoverChunk(s, cutoverId, cutoverChunk, caller, bounds, listPage),
    });
  }

  /** One rollout state change: a compare-and-swap on the rollout's revision (plan-rollout.ts). */
  async changeRollout(tenant: string, change: RolloutChange): Promise<RolloutRow> {
    const position = await this.cutoverStartPosition();
    return await this.apply({
      operation: 'changeRollout',
      tenant,
      plan: (s) => planRolloutChange(s, change, position(s)),
    });
  }

  /** The tenant's rollouts (one when `rolloutId` is given), read as one snapshot. */
  readRollouts(tenant: string, rolloutId?: string): Promise<RolloutRow[]> {
    return this.apply({
      operation: 'readRollouts',
      tenant,
      plan: (s) => planReadRollouts(s, rolloutId),
      ...(rolloutId === undefined
        ? { ranges: [{ type: 'rolloutKeys' as const, prefix: ROLLOUTS_PREFIX }] }
        : {}),
    });
  }

  readRolloutScopes(
    tenant: string,
    rolloutId: string,
  ): Promise<{ scope: string; row: RolloutScopeRow }[]> {
    const range = { type: 'rolloutKeys' as const, prefix: rolloutScopesPrefix(rolloutId) };
    return this.apply({
      operation: 'readRolloutScopes',
      tenant,
      plan: (s) => planReadRolloutScopes(s, rolloutId),
      ranges: [range],
    });
  }

  /** Takes or renews a rollout's driver lease in store time (plan-rollout-driver.ts). */
  claimRolloutDriver(
    tenant: string,
    rolloutId: string,
    holder: string,
    ttlMs: number,
  ): Promise<RolloutDriverRow | null> {
    return this.apply({
      operation: 'claimRolloutDriver',
      tenant,
      plan: (s) => planClaimDriver(s, rolloutId, holder, ttlMs),
    });
  }

  recordRolloutGates(
    tenant: string,
    rolloutId: string,
    claim: DriverClaim,
    step: number,
    gateResults: T.RolloutGateResult[],
  ): Promise<void> {
    return this.apply({
      operation: 'recordRolloutGates',
      tenant,
      plan: (s) => planRecordGates(s, rolloutId, claim, step, gateResults),
    });
  }

  readRolloutDriver(tenant: string, rolloutId: string): Promise<RolloutDriverRow | null> {
    return this.apply({
      operation: 'readRolloutDriver',
      tenant,
      plan: (s) => planReadDriver(s, rolloutId),
    });
  }

  /** One write per chunk of events, in order: a job's events apply in order across chunks. */
  async recordJobEvents(tenant: string, events: T.JobEvent[]): Promise<void> {
    const { jobEventsPerWrite: chunk } = this.planLimits();
    for (let start = 0; start < events.length; start += chunk) {
      const part = events.length <= chunk ? events : events.slice(start, start + chunk);
      await this.apply({
        operation: 'recordJobEvents',
        tenant,
        plan: (s) => planJobEvents(s, part),
      });
    }
  }
}
