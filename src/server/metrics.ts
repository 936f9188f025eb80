/**
 * Prometheus metrics of one server. Each server has its own registry, so several servers in one
 * process (tests) do not share counters. Labels never carry scopes, tokens or values, and carry
 * tenants and rollout ids only when the server is told to show them (rolloutNames).
 */
import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { INTENT_STATUSES, type CommitResult } from '../types.js';
import type { RolloutGauge } from '../rollout/rollout-gauges.js';
import type { QueueDepths } from '../store/optimistic/fair-queue.js';
import type { StoreGauges } from './store-gauges.js';

/** Rejections that mean the caller acted on an outdated view of authority or state. */
const STALE_CODES = new Set([
  'stale_fence',
  'not_holder',
  'authority_revoked',
  'lease_expired',
  'stale_policy',
  'stale_dependency',
  'stale_revision',
  'incarnation_changed',
]);

export type LeaseOperation =
  'acquire' | 'renew' | 'release' | 'cancel_intents' | 'takeover' | 'cancel' | 'delete';

export class ServerMetrics {
  readonly registry: Registry;
  readonly #commits: Counter<'outcome' | 'reason'>;
  readonly #stale: Counter<'operation' | 'reason'>;
  readonly #leases: Counter<'operation' | 'outcome'>;
  readonly #latency: Histogram<'method' | 'route' | 'status'>;
  readonly #rateLimited: Counter<'route'>;

  constructor(
    options: {
      defaultMetrics?: boolean;
      /** Where the metrics go; a fresh Registry when absent. Dispatcher metrics may share it. */
      registry?: Registry;
      /**
       * The store's gauges, refreshed in the background: a scrape reads their last values and
       * does no store work.
       */
      storeGauges?: StoreGauges;
      /** Label the rollout gauges with tenant and rollout id instead of a pseudonym. */
      rolloutNames?: boolean;
      /** The depths of the queue in front of the store's group commit, read at each scrape. */
      commitQueue?: () => QueueDepths | null;
    } = {},
  ) {
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    const commitQueue = options.commitQueue;
    if (commitQueue !== undefined) commitQueueGauges(commitQueue, registers);
    const gauges = options.storeGauges;
    if (gauges !== undefined) {
      const verifier = gauges.verifier;
      new Gauge({
        name: 'fencegate_verify_violations',
        help: 'Invariant violations found in the audit log of every tenant (must be 0), verified in the background.',
        registers,
        collect() {
          this.set(verifier.violations);
        },
      });
      new Gauge({
        name: 'fencegate_verify_checked_entries',
        help: 'Audit entries of every tenant verified so far by the background verifier.',
        registers,
        collect() {
          this.set(verifier.checked);
        },
      });
      new Gauge({
        name: 'fencegate_verify_last_run_timestamp_seconds',
        help: 'When the background verifier last reached the end of the audit log (0: not yet).',
        registers,
        collect() {
          this.set((verifier.lastRunAt ?? 0) / 1000);
        },
      });
      new Gauge({
        name: 'fencegate_intents',
        help: 'Intents by status, counted in the background.',
        labelNames: ['status'],
        registers,
        collect() {
          const counts = gauges.intents;
          // Before the first count the series are absent rather than a false 0.
          if (counts === null) return;
          for (const status of INTENT_STATUSES) this.set({ status }, counts[status] ?? 0);
        },
      });
      rolloutGauges(gauges, registers, options.rolloutNames === true);
    }
    this.#commits = new Counter({
      name: 'fencegate_commits_total',
      help: 'Commit attempts by outcome (committed, rejected, error) and reason (the rejection or error code).',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.#stale = new Counter({
      name: 'fencegate_stale_attempts_total',
      help: 'Attempts refused because the caller held an outdated fence, lease, policy or revision.',
      labelNames: ['operation', 'reason'],
      registers,
    });
    this.#leases = new Counter({
      name: 'fencegate_lease_operations_total',
      help: 'Lease and authority operations by outcome (ok or the error code).',
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'fencegate_rate_limited_total',
      help: 'Requests answered 429 rate_limited: a tenant over its --tenant-rate, by route pattern.',
      labelNames: ['route'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'fencegate_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    if (options.defaultMetrics === true)
      collectDefaultMetrics({ register: this.registry, prefix: 'fencegate_' });
  }

  commit(result: CommitResult): void {
    // A replay answers an attempt already counted: a job retried under its operationId counts once.
    if (result.replayed) return;
    if (result.outcome === 'committed') {
      this.#commits.inc({ outcome: 'committed', reason: 'none' });
      return;
    }
    this.#commits.inc({ outcome: 'rejected', reason: result.error.code });
    if (STALE_CODES.has(result.error.code))
      this.#stale.inc({ operation: 'commit', reason: result.error.code });
  }

  /** A commit that threw (operation_id_conflict, outcome_unknown, store_unavailable, …). */
  commitError(code: string): void {
    this.#commits.inc({ outcome: 'error', reason: code });
  }

  lease(operation: LeaseOperation, outcome: string): void {
    this.#leases.inc({ operation, outcome });
    if (STALE_CODES.has(outcome)) this.#stale.inc({ operation, reason: outcome });
  }

  rateLimited(route: string): void {
    this.#rateLimited.inc({ route });
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.#latency.observe({ method, route, status: String(status) }, seconds);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The rollouts' gauges: the active rollouts and those finished within a day, at most 100 shared
 * fairly between tenants (rollout-gauges.ts). /metrics needs no token, so by default a rollout is
 * labelled by its pseudonym alone (rolloutPseudonym); with `names`, by `tenant` and `rollout` id.
 * Series of a rollout no longer shown go at the next scrape.
 */
function rolloutGauges(gauges: StoreGauges, registers: Registry[], names: boolean): void {
  const labelNames = names ? ['tenant', 'rollout'] : ['rollout'];
  const labels = (rollout: RolloutGauge): Record<string, string> =>
    names
      ? { tenant: rollout.tenant, rollout: rollout.rolloutId }
      : { rollout: rolloutPseudonym(rollout.tenant, rollout.rolloutId) };
  const each = (collect: (gauge: Gauge, rollout: RolloutGauge) => void) =>
    function (this: Gauge) {
      this.reset();
      for (const rollout of gauges.rollouts ?? []) collect(this, rollout);
    };
  new Gauge({
    name: 'fencegate_rollout_percent',
    help: 'The percent of its selection a rollout has ramped to (active and recently finished rollouts).',
    labelNames,
    registers,
    collect: each((gauge, rollout) => gauge.set(labels(rollout), rollout.percent)),
  });
  new Gauge({
    name: 'fencegate_rollout_scopes_moved',
    help: 'Scopes a rollout moved, by step (1, 2, …) and rollback.',
    labelNames: [...labelNames, 'step'],
    registers,
    collect: each((gauge, rollout) => {
      for (const [step, scopes] of rollout.moved) gauge.set({ ...labels(rollout), step }, scopes);
    }),
  });
  new Gauge({
    name: 'fencegate_rollout_stale_attempts',
    help: "Commit attempts after a rollout's rollback under a fence older than the rollback's.",
    labelNames,
    registers,
    collect: each((gauge, rollout) => {
      if (rollout.staleAttempts !== null) gauge.set(labels(rollout), rollout.staleAttempts);
    }),
  });
  new Gauge({
    name: 'fencegate_rollout_stale_accepted',
    help: "Of the stale attempts after a rollout's rollback, the accepted ones, from the audit log (must be 0).",
    labelNames,
    registers,
    collect: each((gauge, rollout) => {
      if (rollout.staleAccepted !== null) gauge.set(labels(rollout), rollout.staleAccepted);
    }),
  });
}

/**
 * A rollout's label on /metrics unless names are shown: the first 16 hex digits of the SHA-256 of
 * `<tenant>\n<rolloutId>`. It keeps tenants and rollout ids off the public scrape, and one who
 * knows both computes it to find the rollout's series. A pseudonym, not a secret: a guessable id
 * can be confirmed.
 */
export function rolloutPseudonym(tenant: string, rolloutId: string): string {
  return createHash('sha256').update(`${tenant}\n${rolloutId}`).digest('hex').slice(0, 16);
}

/**
 * The group-commit queue per tenant, without naming tenants (labels never do): the writes waiting,
 * how many tenants they belong to, and the deepest single tenant's queue. A storm shows as one
 * tenant's depth near the total while others stay shallow.
 */
function commitQueueGauges(depths: () => QueueDepths | null, registers: Registry[]): void {
  const gauge = (name: string, help: string, value: (d: QueueDepths) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const current = depths();
        this.set(current === null ? 0 : value(current));
      },
    });
  };
  gauge(
    'fencegate_commit_queue_waiting',
    'Writes waiting for a group-commit batch of the store (0 without group commit).',
    (d) => d.waiting,
  );
  gauge(
    'fencegate_commit_queue_tenants',
    'Tenants with writes waiting for a group-commit batch.',
    (d) => d.tenants,
  );
  gauge(
    'fencegate_commit_queue_deepest_tenant',
    "The writes waiting of the tenant with the most waiting (one tenant's backlog).",
    (d) => d.deepestTenant,
  );
}
