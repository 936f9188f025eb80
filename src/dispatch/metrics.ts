/**
 * Dispatcher metrics hooks. The dispatcher reports through this small interface, so the server can
 * bind it to prom-client (see prom-metrics.ts) and tests can count. Implementations must be cheap
 * and must not throw.
 */

/**
 * What the store accepted for a claimed intent: `delivered`; `reconciled` (delivered, confirmed by
 * the provider's lookup without a second delivery); `retry` (a retryable failure, back to pending
 * with backoff); `failed` (final); `unknown` (no verdict, reconciled later); `needs_attention`
 * (reconciliation gave up).
 */
export type DispatchOutcome =
  'delivered' | 'reconciled' | 'retry' | 'failed' | 'unknown' | 'needs_attention';

export const DISPATCH_OUTCOMES: readonly DispatchOutcome[] = [
  'delivered',
  'reconciled',
  'retry',
  'failed',
  'unknown',
  'needs_attention',
];

/** What one effector call (deliver or lookup) answered, for latency samples. */
export type EffectorCall = 'deliver' | 'lookup';
export type EffectorAnswer = 'delivered' | 'failed' | 'unknown' | 'not_found';

export type DispatchStage = 'claim' | 'complete';

export interface DispatcherMetrics {
  /** An outcome the store accepted for one claimed intent of `target`. */
  outcome(target: string, outcome: DispatchOutcome): void;
  /** One effector call and how long it took, in milliseconds. */
  effectorLatency(target: string, call: EffectorCall, answer: EffectorAnswer, ms: number): void;
  /**
   * A completion refused with stale_claim: the claim lapsed and another dispatcher claimed the
   * intent since. The outcome is dropped, never retried.
   */
  staleCompletion(target: string): void;
  /** A claim or completion that failed for another reason (`code`: the error code). */
  error(stage: DispatchStage, code: string): void;
}

/** The last this-many latency samples are kept by DispatcherStats. */
const MAX_SAMPLES = 10_000;

/** Counters in memory: every Dispatcher keeps one (`dispatcher.stats`); tests and benches read it. */
export class DispatcherStats implements DispatcherMetrics {
  readonly outcomes: Record<DispatchOutcome, number> = {
    delivered: 0,
    reconciled: 0,
    retry: 0,
    failed: 0,
    unknown: 0,
    needs_attention: 0,
  };
  staleCompletions = 0;
  readonly errors: Record<DispatchStage, number> = { claim: 0, complete: 0 };
  /** Effector deliver() latencies in ms, the most recent MAX_SAMPLES. */
  readonly deliveryLatenciesMs: number[] = [];
  deliveries = 0;
  lookups = 0;

  outcome(_target: string, outcome: DispatchOutcome): void {
    this.outcomes[outcome] += 1;
  }

  effectorLatency(_target: string, call: EffectorCall, _answer: EffectorAnswer, ms: number): void {
    if (call === 'lookup') {
      this.lookups += 1;
      return;
    }
    this.deliveries += 1;
    if (this.deliveryLatenciesMs.length >= MAX_SAMPLES) this.deliveryLatenciesMs.shift();
    this.deliveryLatenciesMs.push(ms);
  }

  staleCompletion(): void {
    this.staleCompletions += 1;
  }

  error(stage: DispatchStage): void {
    this.errors[stage] += 1;
  }
}

/** Reports to several sinks; a sink that throws is ignored (metrics never break delivery). */
export function fanOutMetrics(sinks: readonly DispatcherMetrics[]): DispatcherMetrics {
  const each = (call: (sink: DispatcherMetrics) => void): void => {
    for (const sink of sinks) {
      try {
        call(sink);
      } catch {
        // A broken metrics sink must not turn a delivered effect into an error.
      }
    }
  };
  return {
    outcome: (target, outcome) => each((s) => s.outcome(target, outcome)),
    effectorLatency: (target, call, answer, ms) =>
      each((s) => s.effectorLatency(target, call, answer, ms)),
    staleCompletion: (target) => each((s) => s.staleCompletion(target)),
    error: (stage, code) => each((s) => s.error(stage, code)),
  };
}
