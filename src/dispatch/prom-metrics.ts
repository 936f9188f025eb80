/**
 * DispatcherMetrics on prom-client. Register it on the server's Registry; creating two on one
 * Registry is refused by prom-client (the metric names are taken). Labels carry the operator's
 * target names and fixed words only: never tenants, scopes, effect keys or payloads.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type {
  DispatchOutcome,
  DispatchStage,
  DispatcherMetrics,
  EffectorAnswer,
  EffectorCall,
} from './metrics.js';

export class PromDispatcherMetrics implements DispatcherMetrics {
  readonly #outcomes: Counter<'target' | 'outcome'>;
  readonly #latency: Histogram<'target' | 'call' | 'answer'>;
  readonly #stale: Counter<'target'>;
  readonly #errors: Counter<'stage' | 'code'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#outcomes = new Counter({
      name: 'fencegate_dispatch_outcomes_total',
      help: 'Intent outcomes recorded by the dispatcher: delivered, reconciled, retry, failed, unknown, needs_attention.',
      labelNames: ['target', 'outcome'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'fencegate_dispatch_effector_seconds',
      help: 'Effector call latency (deliver or lookup) by what it answered.',
      labelNames: ['target', 'call', 'answer'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#stale = new Counter({
      name: 'fencegate_dispatch_stale_completions_total',
      help: 'Completions refused with stale_claim (the claim lapsed and another dispatcher took it); dropped, never retried.',
      labelNames: ['target'],
      registers,
    });
    this.#errors = new Counter({
      name: 'fencegate_dispatch_errors_total',
      help: 'Claims and completions that failed for another reason, by error code.',
      labelNames: ['stage', 'code'],
      registers,
    });
  }

  outcome(target: string, outcome: DispatchOutcome): void {
    this.#outcomes.inc({ target, outcome });
  }

  effectorLatency(target: string, call: EffectorCall, answer: EffectorAnswer, ms: number): void {
    this.#latency.observe({ target, call, answer }, ms / 1000);
  }

  staleCompletion(target: string): void {
    this.#stale.inc({ target });
  }

  error(stage: DispatchStage, code: string): void {
    this.#errors.inc({ stage, code });
  }
}
