/**
 * The durable dispatcher: claims due intents for the targets it has effectors for, delivers each
 * under its effectKey, and records the outcome under the claim fence. The store decides who may
 * complete: a dispatcher whose claim lapsed gets stale_claim and drops its outcome, so a paused
 * dispatcher never overwrites a newer attempt's verdict.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { FencegateOpsApi } from '../api.js';
import { NAME_PATTERN, NAME_RULE, TARGET_PATTERN, TARGET_RULE } from '../core/limits.js';
import { fail, isFencegateError } from '../errors.js';
import type {
  ClaimIntentsRequest,
  CompleteIntentRequest,
  Intent,
  IntentCompletionCode,
} from '../types.js';
import { attemptIntent, describe, type AttemptVerdict } from './attempt.js';
import { backoffDelay, normalizeBackoff, type Backoff, type BackoffOptions } from './backoff.js';
import {
  batchedCompletion,
  type BatchCompletionApi,
  type RecordCompletion,
} from './completion-batch.js';
import type { Effector } from './effector.js';
import { CompletionsWithClaims, type CompleteAndClaimApi } from './completions-with-claims.js';
import { InFlight } from './in-flight.js';
import { silentLogger, type DispatcherLogger } from './logger.js';
import { WakeUp, type IntentWakeSource } from './wake.js';
import type { IntentTaker } from '../store/intent-takers.js';

/** An API whose commits can claim their intents for a dispatcher of this process (a Fencegate). */
export interface IntentTakerSource {
  /** Offers `taker` room for the intents of each commit; returns the function that withdraws it. */
  offerIntentTaker(taker: IntentTaker): () => void;
}
import {
  DispatcherStats,
  fanOutMetrics,
  type DispatchOutcome,
  type DispatcherMetrics,
} from './metrics.js';

/**
 * The two calls a dispatcher needs: a Fencegate handle or the HTTP client. An API that can also
 * watch for committed intents (a Fencegate handle) wakes the dispatcher without waiting for a poll,
 * one that records completions in batches records the outcomes of concurrent deliveries in one
 * store write, and one that also claims in that write (a Fencegate handle) sends them with the
 * next claim of a running dispatcher. One that commits in this process (a Fencegate handle) lets a
 * running dispatcher take intents as they are committed, claimed by the commit itself.
 */
export type DispatchApi = Pick<FencegateOpsApi, 'claimIntents' | 'completeIntent'> &
  Partial<IntentWakeSource> &
  Partial<IntentTakerSource> &
  Partial<BatchCompletionApi> &
  Partial<Pick<CompleteAndClaimApi, 'completeAndClaim'>>;

export interface DispatcherOptions {
  /** A tenant-bound Fencegate (or the HTTP client): the dispatcher serves that tenant's intents. */
  api: DispatchApi;
  /** Recorded on each claim and in the audit log. Default: `dispatcher-HOST-PID`. */
  dispatcherId?: string;
  /** One effector per target name; only intents for these targets are claimed. */
  effectors: Record<string, Effector>;
  /**
   * Whether the tenant this dispatcher serves may use `target` (a target's `tenants` list). An
   * intent for a target it may not use is never delivered: it ends `failed` with lastError
   * `target_not_allowed`. Default: every target may be used.
   */
  targetAllowed?: (target: string) => boolean;
  /**
   * How long a claim is exclusive. Must exceed the slowest delivery: the effector's signal fires
   * shortly before it lapses. Default 30,000.
   */
  claimTtlMs?: number;
  /**
   * Intents claimed (and delivered concurrently) per round; a running dispatcher keeps up to this
   * many in flight and claims again once half of them have finished. Default 16.
   */
  batchSize?: number;
  /**
   * The pause between rounds when nothing was due. Default 500. An API that watches for committed
   * intents ends the pause as they are committed, so this is only the safety net then.
   */
  pollIntervalMs?: number;
  backoff?: BackoffOptions;
  /** Redeliveries after unknown outcomes (no lookup, or lookup not_found) before needs_attention. Default 3. */
  maxUnknownRedeliveries?: number;
  /**
   * Claims after which an intent is not delivered again: a retryable failure at this attempt is
   * final (`failed`), and a claim beyond it (earlier outcomes were never recorded) ends
   * `needs_attention`. Default 100.
   */
  maxAttempts?: number;
  metrics?: DispatcherMetrics;
  logger?: DispatcherLogger;
  /** Milliseconds for latency samples. Default: performance.now(). */
  clock?: { now(): number };
  /** Waits between rounds; must resolve early when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** [0, 1) for backoff jitter. Default Math.random. */
  random?: () => number;
}

/** What one round did. */
export interface RoundSummary {
  claimed: number;
  outcomes: Record<DispatchOutcome, number>;
  /** Outcomes dropped because the claim was no longer current (stale_claim). */
  staleCompletions: number;
  /** Outcomes that could not be recorded for another reason; the claim lapses and is retried. */
  completionErrors: number;
}

export const DEFAULT_CLAIM_TTL_MS = 30_000;
export const DEFAULT_BATCH_SIZE = 16;
export const DEFAULT_POLL_INTERVAL_MS = 500;
/** The shortest wait after a failed claim when the poll interval is longer. */
const FAILED_CLAIM_FLOOR_MS = 500;
export const MAX_POLL_INTERVAL_MS = 3_600_000;
export const DEFAULT_MAX_UNKNOWN_REDELIVERIES = 3;
export const DEFAULT_MAX_ATTEMPTS = 100;
/** lastError of an intent whose tenant may not use its target. */
export const TARGET_NOT_ALLOWED: IntentCompletionCode = 'target_not_allowed';
const MAX_TARGETS_PER_CLAIM = 256;
/** Completions retried after store_unavailable / outcome_unknown, while the claim still holds. */
const COMPLETION_TRIES = 3;

export class Dispatcher {
  readonly dispatcherId: string;
  readonly targets: readonly string[];
  /** Counters of this dispatcher since it was created. */
  readonly stats = new DispatcherStats();
  readonly #api: DispatchApi;
  readonly #effectors: ReadonlyMap<string, Effector>;
  readonly #targetAllowed: (target: string) => boolean;
  readonly #claimTtlMs: number;
  readonly #batchSize: number;
  readonly #pollIntervalMs: number;
  readonly #backoff: Backoff;
  readonly #maxUnknownRedeliveries: number;
  readonly #maxAttempts: number;
  readonly #metrics: DispatcherMetrics;
  readonly #logger: DispatcherLogger;
  readonly #clock: { now(): number };
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #recordCompletion: RecordCompletion;
  /** Completions sent with the next claim, when the API can do both in one store write. */
  readonly #withClaims: CompletionsWithClaims | null;
  #loop: Promise<void> | null = null;
  #stopping: AbortController | null = null;
  readonly #wake = new WakeUp();
  #unwatch: (() => void) | null = null;
  #withdraw: (() => void) | null = null;

  constructor(options: DispatcherOptions) {
    this.#api = options.api;
    this.dispatcherId = options.dispatcherId ?? defaultDispatcherId();
    if (!NAME_PATTERN.test(this.dispatcherId)) {
      fail('invalid_request', `dispatcherId must be ${NAME_RULE}`, { field: 'dispatcherId' });
    }
    this.#effectors = new Map(Object.entries(options.effectors));
    this.#targetAllowed = options.targetAllowed ?? (() => true);
    this.targets = [...this.#effectors.keys()];
    if (this.targets.length === 0 || this.targets.length > MAX_TARGETS_PER_CLAIM) {
      fail('invalid_request', `a dispatcher needs 1 to ${MAX_TARGETS_PER_CLAIM} effectors`, {
        field: 'effectors',
      });
    }
    for (const target of this.targets) {
      if (!TARGET_PATTERN.test(target)) {
        fail('invalid_request', `effector name "${target}" must be ${TARGET_RULE}`, {
          field: 'effectors',
        });
      }
    }
    this.#claimTtlMs = integerOption(
      options.claimTtlMs,
      DEFAULT_CLAIM_TTL_MS,
      'claimTtlMs',
      100,
      86_400_000,
    );
    this.#batchSize = integerOption(options.batchSize, DEFAULT_BATCH_SIZE, 'batchSize', 1, 1000);
    this.#pollIntervalMs = integerOption(
      options.pollIntervalMs,
      DEFAULT_POLL_INTERVAL_MS,
      'pollIntervalMs',
      1,
      MAX_POLL_INTERVAL_MS,
    );
    this.#backoff = normalizeBackoff(options.backoff);
    this.#maxUnknownRedeliveries = integerOption(
      options.maxUnknownRedeliveries,
      DEFAULT_MAX_UNKNOWN_REDELIVERIES,
      'maxUnknownRedeliveries',
      0,
      1_000_000,
    );
    this.#maxAttempts = integerOption(
      options.maxAttempts,
      DEFAULT_MAX_ATTEMPTS,
      'maxAttempts',
      1,
      1_000_000_000,
    );
    this.#metrics = fanOutMetrics(
      options.metrics === undefined ? [this.stats] : [this.stats, options.metrics],
    );
    this.#logger = options.logger ?? silentLogger;
    this.#clock = options.clock ?? performance;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#random = options.random ?? Math.random;
    const api = this.#api;
    this.#withClaims =
      api.completeAndClaim === undefined || api.completeIntents === undefined
        ? null
        : new CompletionsWithClaims(
            {
              completeAndClaim: api.completeAndClaim.bind(api),
              completeIntents: api.completeIntents.bind(api),
            },
            this.#batchSize,
          );
    const withClaims = this.#withClaims;
    this.#recordCompletion =
      withClaims !== null
        ? (effectKey, request) => withClaims.complete(effectKey, request)
        : api.completeIntents === undefined
          ? (effectKey, request) => api.completeIntent(effectKey, request)
          : batchedCompletion({ completeIntents: api.completeIntents.bind(api) }, this.#batchSize);
  }

  /**
   * One round: claims up to batchSize due intents, delivers them concurrently and records each
   * outcome. Throws only when the claim itself fails (nothing was claimed then).
   */
  async runOnce(): Promise<RoundSummary> {
    const { summary, deliveries } = await this.#claimAndDeliver(() => this.#batchSize);
    await Promise.all(deliveries.map((delivery) => delivery.recorded));
    return summary;
  }

  /** A claim of up to `limit` intents: with the outcomes on their way to the store, if it can. */
  #claim(limit: () => number): Promise<Intent[]> {
    const request = (): ClaimIntentsRequest => ({
      dispatcher: this.dispatcherId,
      ttlMs: this.#claimTtlMs,
      limit: limit(),
      targets: [...this.targets],
    });
    return this.#withClaims === null
      ? this.#api.claimIntents(request())
      : this.#withClaims.claim(request);
  }

  /**
   * Claims up to `limit()` due intents (asked when the claim is sent) and starts delivering them:
   * per intent, a promise settled once its verdict is known and one settled (never rejected) once
   * its outcome is recorded in `summary`. Throws only when the claim fails.
   */
  async #claimAndDeliver(limit: () => number): Promise<{
    summary: RoundSummary;
    deliveries: { verdict: Promise<AttemptVerdict>; recorded: Promise<void> }[];
  }> {
    const intents = await this.#claim(limit);
    // The claim lapses claimTtlMs after the store granted it, which was before its answer
    // arrived; the guard leaves room to record the outcome while the claim is still ours.
    return this.#deliverClaimed(intents, performance.now());
  }

  /**
   * Starts delivering intents claimed by this dispatcher no earlier than `claimedAt`
   * (performance.now()): per intent, a promise settled once its verdict is known and one settled
   * (never rejected) once its outcome is recorded in `summary`.
   */
  #deliverClaimed(
    intents: Intent[],
    claimedAt: number,
  ): {
    summary: RoundSummary;
    deliveries: { verdict: Promise<AttemptVerdict>; recorded: Promise<void> }[];
  } {
    const guard = Math.min(1000, Math.floor(this.#claimTtlMs / 5));
    const deadline = AbortSignal.timeout(
      Math.max(1, Math.floor(this.#claimTtlMs - guard - (performance.now() - claimedAt))),
    );
    // Each delivery of the claim listens to it: more than the default ten listeners is expected.
    setMaxListeners(0, deadline);
    const summary: RoundSummary = {
      claimed: intents.length,
      outcomes: {
        delivered: 0,
        reconciled: 0,
        retry: 0,
        failed: 0,
        unknown: 0,
        needs_attention: 0,
      },
      staleCompletions: 0,
      completionErrors: 0,
    };
    const deliveries = intents.map((intent) => {
      const verdict = this.#verdictOf(intent, deadline);
      const recorded = verdict
        .then((decided) =>
          this.#complete(
            intent,
            { claimFence: intent.claimFence, ...decided.completion },
            decided,
            summary,
            deadline,
          ),
        )
        .catch((error: unknown) => {
          // Only a throwing hook (targetAllowed, metrics, logger) gets here: the claim lapses and
          // the intent is claimed again.
          summary.completionErrors += 1;
          this.#logger.error(
            { dispatcher: this.dispatcherId, effectKey: intent.effectKey, error: describe(error) },
            'handling a claimed intent failed',
          );
        });
      return { verdict, recorded };
    });
    return { summary, deliveries };
  }

  /** Runs rounds until stop(): back to back while intents are due, else every pollIntervalMs. */
  start(): void {
    if (this.#loop !== null) return;
    const stopping = new AbortController();
    this.#stopping = stopping;
    const inFlight = new InFlight(stopping.signal);
    this.#unwatch = this.#api.watchIntents?.(() => this.#wake.notify()) ?? null;
    this.#withdraw = this.#api.offerIntentTaker?.(this.#taker(inFlight)) ?? null;
    this.#loop = this.#run(stopping.signal, inFlight);
  }

  /**
   * Takes intents as they are committed in this process, as many as the batch has room for: the
   * commit claims them for this dispatcher (core/claim-at-commit.ts), and they are delivered as
   * claimed ones are. A claim of a commit whose answer never comes back here lapses, and the
   * intents are claimed again.
   */
  #taker(inFlight: InFlight): IntentTaker {
    return {
      dispatcher: this.dispatcherId,
      ttlMs: this.#claimTtlMs,
      targets: new Set(this.targets),
      reserve: (wanted) => inFlight.reserve(wanted, this.#batchSize),
      take: (reserved, intents, claimedAt) => {
        try {
          if (intents.length > 0) {
            for (const { verdict, recorded } of this.#deliverClaimed(intents, claimedAt)
              .deliveries) {
              inFlight.add(recorded, verdict);
            }
          }
        } finally {
          inFlight.release(reserved);
        }
      },
    };
  }

  /** Stops claiming and resolves once the deliveries in flight are delivered and recorded. */
  async stop(): Promise<void> {
    // No commit claims for this dispatcher once it stops; those that did are delivered.
    this.#withdraw?.();
    this.#withdraw = null;
    this.#stopping?.abort();
    this.#unwatch?.();
    this.#unwatch = null;
    const loop = this.#loop;
    await loop;
    if (this.#loop === loop) {
      this.#loop = null;
      this.#stopping = null;
    }
  }

  get running(): boolean {
    return this.#loop !== null;
  }

  /**
   * Keeps up to batchSize deliveries in flight: claims again as soon as half of them have finished
   * (or all, for a batch of one), back to back while intents are due, else after pollIntervalMs or
   * news of committed intents; after a claim that failed, after the backoff.
   */
  async #run(signal: AbortSignal, inFlight: InFlight): Promise<void> {
    const claimAt = Math.ceil(this.#batchSize / 2);
    let failures = 0;
    while (!signal.aborted) {
      if (this.#batchSize - inFlight.size < claimAt) {
        await inFlight.waitForRoom();
        continue;
      }
      try {
        this.#wake.roundStarts();
        // The room when the claim is sent: deliveries ending meanwhile make more.
        const { summary, deliveries } = await this.#claimAndDeliver(
          () => this.#batchSize - inFlight.size,
        );
        for (const { verdict, recorded } of deliveries) inFlight.add(recorded, verdict);
        failures = 0;
        // Any intent claimed means more may be due: a claim takes fewer than asked where their
        // JSON would pass the answer's byte budget. Only a claim that took none waits.
        if (summary.claimed > 0) continue;
        if (!signal.aborted) await this.#wake.sleep(this.#pollIntervalMs, signal, this.#sleep);
        continue;
      } catch (error) {
        failures += 1;
        const code = errorCode(error);
        this.#metrics.error('claim', code);
        this.#logger.error(
          { dispatcher: this.dispatcherId, code, error: describe(error) },
          'claiming intents failed; retrying',
        );
        // A failed claim is tried again after the backoff, whatever the poll interval: waiting a
        // whole poll (a minute or more) would leave the intents due meanwhile undelivered that
        // long after the store came back. Never sooner than the poll or FAILED_CLAIM_FLOOR_MS,
        // whichever is shorter, so a backoff of 0 does not ask a failing store at every turn of
        // the event loop; news of commits do not end this wait either.
        const floorMs = Math.min(this.#pollIntervalMs, FAILED_CLAIM_FLOOR_MS);
        const waitMs = Math.max(floorMs, backoffDelay(this.#backoff, failures, this.#random));
        if (!signal.aborted) await this.#sleep(waitMs, signal);
      }
    }
    await inFlight.drained();
  }

  /** What to record for a claimed intent: delivered (or reconciled), failed, unknown, … */
  async #verdictOf(intent: Intent, deadline: AbortSignal): Promise<AttemptVerdict> {
    const effector = this.#effectors.get(intent.target);
    return !this.#targetAllowed(intent.target)
      ? // Another tenant's target (its URL, its credentials): never sent.
        {
          completion: {
            outcome: 'failed',
            retryable: false,
            error: TARGET_NOT_ALLOWED,
            code: TARGET_NOT_ALLOWED,
          },
          outcome: 'failed',
        }
      : effector === undefined
        ? // The claim names our targets only; should a store answer otherwise, let another take it.
          {
            completion: {
              outcome: 'failed',
              retryable: true,
              retryAfterMs: 0,
              error: `dispatcher ${this.dispatcherId} has no effector for target ${intent.target}`,
            },
            outcome: 'retry',
          }
        : await attemptIntent(intent, effector, {
            maxUnknownRedeliveries: this.#maxUnknownRedeliveries,
            maxAttempts: this.#maxAttempts,
            delay: (n) => backoffDelay(this.#backoff, n, this.#random),
            signal: deadline,
            now: () => this.#clock.now(),
            onEffectorCall: (call, answer, ms) =>
              this.#metrics.effectorLatency(intent.target, call, answer, ms),
          });
  }

  async #complete(
    intent: Intent,
    request: CompleteIntentRequest,
    verdict: AttemptVerdict,
    summary: RoundSummary,
    deadline: AbortSignal,
  ): Promise<void> {
    const fields = {
      dispatcher: this.dispatcherId,
      effectKey: intent.effectKey,
      target: intent.target,
      claimFence: intent.claimFence,
      attempts: intent.attempts,
    };
    let earlierOutcomeUnknown = false;
    let completion = request;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#recordCompletion(intent.effectKey, completion);
        summary.outcomes[verdict.outcome] += 1;
        this.#metrics.outcome(intent.target, verdict.outcome);
        const logFields = {
          ...fields,
          outcome: verdict.outcome,
          ...(request.error === undefined ? {} : { error: request.error }),
        };
        if (verdict.outcome === 'needs_attention' || verdict.outcome === 'failed') {
          this.#logger.warn(logFields, `intent ${verdict.outcome}`);
        } else {
          this.#logger.info(logFields, `intent ${verdict.outcome}`);
        }
        return;
      } catch (error) {
        const code = errorCode(error);
        if (code === 'stale_claim' && earlierOutcomeUnknown) {
          // Our earlier try may have been recorded (then the claim is no longer open), or another
          // dispatcher took the claim: either way the store holds a verdict we must not touch.
          summary.completionErrors += 1;
          this.#metrics.error('complete', 'outcome_unknown');
          this.#logger.warn(
            { ...fields, outcome: verdict.outcome },
            'whether the outcome was recorded is unknown; the store holds the verdict',
          );
          return;
        }
        if (code === 'stale_claim') {
          // Another dispatcher claimed the intent after ours lapsed: its attempt decides. Retrying
          // would be refused again, and must never overwrite a newer verdict.
          summary.staleCompletions += 1;
          this.#metrics.staleCompletion(intent.target);
          this.#logger.warn(
            { ...fields, outcome: verdict.outcome },
            'completion refused (stale_claim): the claim lapsed and another dispatcher took the intent; outcome dropped',
          );
          return;
        }
        const transient = code === 'store_unavailable' || code === 'outcome_unknown';
        if (!transient && completion === request && !deadline.aborted) {
          // The store refused what the provider or effector said (its text): the verdict is
          // recorded without it rather than lost, which would send the intent again.
          this.#logger.warn(
            { ...fields, outcome: verdict.outcome, code },
            "the store refused the outcome's text; recording the outcome without it",
          );
          completion = withoutText(request);
          continue;
        }
        if (!transient || attempt >= COMPLETION_TRIES || deadline.aborted) {
          // The claim lapses and the intent is claimed again; the next attempt reconciles.
          summary.completionErrors += 1;
          this.#metrics.error('complete', code);
          this.#logger.error(
            { ...fields, outcome: verdict.outcome, code, error: describe(error) },
            'recording the outcome failed; the intent will be claimed again and reconciled',
          );
          return;
        }
        earlierOutcomeUnknown ||= code === 'outcome_unknown';
        await this.#sleep(50 * attempt, new AbortController().signal);
      }
    }
  }
}

/** The completion's verdict alone: no providerRef, and a fixed error text. */
function withoutText(request: CompleteIntentRequest): CompleteIntentRequest {
  const { providerRef: _providerRef, error, ...verdict } = request;
  return error === undefined
    ? verdict
    : { ...verdict, error: 'the error text was not storable and was dropped' };
}

function errorCode(error: unknown): string {
  return isFencegateError(error) ? error.code : 'internal_error';
}

function integerOption(
  value: number | undefined,
  fallback: number,
  field: string,
  min: number,
  max: number,
): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < min || chosen > max) {
    fail('invalid_request', `${field} must be an integer from ${min} to ${max}`, { field });
  }
  return chosen;
}

function defaultDispatcherId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._:/@-]/g, '-')
      .slice(0, 200) || 'host';
  return `dispatcher-${host}-${process.pid}`;
}

/** setTimeout that resolves at once when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
