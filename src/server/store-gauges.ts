/**
 * The gauges of /metrics that come from the store (intents by status, audit violations, rollouts),
 * kept fresh in the background: every `intervalMs` one refresh counts intents, verifies the audit
 * entries appended since the last refresh and reads the active and recent rollouts. A scrape only reads the last values, so anyone who can
 * reach /metrics causes no store work and takes no store lock.
 */
import { BackgroundVerifier } from '../audit/background-verifier.js';
import { readRolloutGauges, type RolloutGauge } from '../rollout/rollout-gauges.js';
import type { Store } from '../store/store.js';
import type { IntentStatus } from '../types.js';

export interface StoreGaugesOptions {
  /** Between the end of one refresh and the start of the next. Default 15,000. */
  intervalMs?: number;
  /** Delivered effects the verifier remembers for its double-delivery check. Default 100,000. */
  maxDeliveredEffects?: number;
  /** Told when a refresh fails; the gauges keep their last values and the next refresh retries. */
  onError?: (error: unknown) => void;
}

export const DEFAULT_GAUGE_INTERVAL_MS = 15_000;

export class StoreGauges {
  readonly verifier: BackgroundVerifier;
  readonly #store: Store;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #intents: Partial<Record<IntentStatus, number>> | null = null;
  #rollouts: readonly RolloutGauge[] | null = null;
  #timer: NodeJS.Timeout | null = null;
  #refreshing: Promise<void> | null = null;
  #stopped = false;

  constructor(store: Store, options: StoreGaugesOptions = {}) {
    this.#store = store;
    this.#intervalMs = options.intervalMs ?? DEFAULT_GAUGE_INTERVAL_MS;
    this.#onError = options.onError ?? (() => undefined);
    this.verifier = new BackgroundVerifier(store, {
      onError: this.#onError,
      ...(options.maxDeliveredEffects === undefined
        ? {}
        : { maxDeliveredEffects: options.maxDeliveredEffects }),
    });
  }

  /** Intents by status at the last refresh; null before the first one succeeded. */
  get intents(): Partial<Record<IntentStatus, number>> | null {
    return this.#intents;
  }

  /** The active and recently finished rollouts at the last refresh; null before the first. */
  get rollouts(): readonly RolloutGauge[] | null {
    return this.#rollouts;
  }

  /** Refreshes now, then every intervalMs until stop(). */
  start(): void {
    if (this.#timer !== null || this.#refreshing !== null || this.#stopped) return;
    void this.refresh().finally(() => this.#schedule());
  }

  /** One refresh of every gauge. Concurrent calls share one refresh. */
  refresh(): Promise<void> {
    this.#refreshing ??= Promise.all([
      this.#countIntents(),
      this.verifier.runOnce(),
      this.#readRollouts(),
    ])
      .then(() => undefined)
      .finally(() => {
        this.#refreshing = null;
      });
    return this.#refreshing;
  }

  /** Stops refreshing and waits for a refresh in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#refreshing;
  }

  async #countIntents(): Promise<void> {
    try {
      this.#intents = await this.#store.countIntents(undefined);
    } catch (error) {
      this.#onError(error);
    }
  }

  async #readRollouts(): Promise<void> {
    try {
      this.#rollouts = await readRolloutGauges(this.#store);
    } catch (error) {
      this.#onError(error);
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.refresh().finally(() => this.#schedule());
    }, this.#intervalMs);
    // A server that is closing does not wait for the next refresh.
    this.#timer.unref();
  }
}
