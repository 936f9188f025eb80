/**
 * Verification in the background for a server's metrics: each run (on the server's interval, see
 * server/store-gauges.ts) reads the audit entries appended since the last one (its checkpoint is
 * its last seq) and keeps the totals, so reading the gauges costs no store work. Its memory
 * follows the scopes it tracks, at most `maxRecords` record revisions and at most
 * `maxDeliveredEffects` delivered effect keys, not the length of the log or the records written.
 */
import type { Store } from '../store/store.js';
import { REPLAY_PAGE_SIZE } from './audit-pages.js';
import { emptyCheckpoint } from './checkpoint.js';
import { HistoryVerifier, type HistoryVerifierOptions } from './history-verifier.js';
import { prunedLogCheckpoint } from './stored-checkpoint.js';
import { TenantVerifications, type TenantVerification } from './tenant-verifications.js';
import { readInto, type EntrySink } from './verify.js';

export interface BackgroundVerifierOptions {
  /** Delivered effects remembered for the double-delivery check. Default 100,000. */
  maxDeliveredEffects?: number;
  /**
   * Record revisions remembered for the revision checks (those written longest ago are forgotten
   * and checked again from their next write). Default 100,000. `fencegate verify` checks them all.
   */
  maxRecords?: number;
  /** Entries read per store call. Default 1000, so one run never holds a large page. */
  pageSize?: number;
  /** Told when a run fails (the store is unreachable); the next run continues from the last seq. */
  onError?: (error: unknown) => void;
}

export const DEFAULT_MAX_DELIVERED_EFFECTS = 100_000;
export const DEFAULT_MAX_RECORDS = 100_000;

export class BackgroundVerifier {
  readonly #store: Store;
  #verifier: HistoryVerifier;
  readonly #verifierOptions: HistoryVerifierOptions;
  readonly #tenants = new TenantVerifications();
  /** Feeds the verifier and counts each entry for its tenant. */
  readonly #sink: EntrySink;
  readonly #pageSize: number;
  readonly #onError: (error: unknown) => void;
  #running: Promise<void> | null = null;
  #lastRunAt: number | null = null;

  constructor(store: Store, options: BackgroundVerifierOptions = {}) {
    this.#store = store;
    // Violations are kept per tenant (TenantVerifications), not in one list for every tenant.
    this.#verifierOptions = {
      maxViolations: 0,
      maxDeliveredEffects: options.maxDeliveredEffects ?? DEFAULT_MAX_DELIVERED_EFFECTS,
      maxRecords: options.maxRecords ?? DEFAULT_MAX_RECORDS,
      onViolation: (violation) => this.#tenants.violation(violation),
    };
    this.#verifier = new HistoryVerifier(emptyCheckpoint(null), this.#verifierOptions);
    const current = (): HistoryVerifier => this.#verifier;
    const tenants = this.#tenants;
    this.#sink = {
      get lastSeq() {
        return current().lastSeq;
      },
      push(entry) {
        tenants.entry(entry);
        current().push(entry);
      },
    };
    this.#pageSize = options.pageSize ?? REPLAY_PAGE_SIZE;
    this.#onError = options.onError ?? (() => undefined);
  }

  /**
   * When audit retention pruned entries this verifier has not read (before it started, or by
   * another process since), it goes on from the checkpoint the store kept for them: the pruned
   * entries were verified clean before they were deleted.
   */
  async #continueAfterPruned(): Promise<void> {
    const pruned = (await this.#store.auditPrunedThrough?.()) ?? 0;
    if (pruned <= (this.#verifier.lastSeq ?? 0)) return;
    const checkpoint = await prunedLogCheckpoint(this.#store);
    if (checkpoint === null) return;
    this.#verifier = new HistoryVerifier(checkpoint, this.#verifierOptions);
    this.#tenants.clear();
  }

  /** Violations found in the history verified so far (must be 0). */
  get violations(): number {
    return this.#verifier.totalViolations;
  }

  /** What was found in one tenant's entries: the dashboard shows a tenant only its own. */
  forTenant(tenant: string): TenantVerification {
    return this.#tenants.of(tenant);
  }

  /** Entries verified so far. */
  get checked(): number {
    return this.#verifier.totalChecked;
  }

  /** seq of the last entry verified, or null. */
  get lastSeq(): number | null {
    return this.#verifier.lastSeq;
  }

  /** When the last run that reached the end of the log finished (ms since the epoch), or null. */
  get lastRunAt(): number | null {
    return this.#lastRunAt;
  }

  /** What the verifier holds: scopes, record revisions and delivered effects it remembers. */
  get trackedState(): { scopes: number; records: number; deliveredEffects: number } {
    const checkpoint = this.#verifier.checkpoint();
    return {
      scopes: checkpoint.scopes.length,
      records: checkpoint.scopes.reduce((sum, scope) => sum + scope[8].length, 0),
      deliveredEffects: checkpoint.delivered.length,
    };
  }

  /** Reads and verifies the entries appended since the last run. Concurrent calls share one run. */
  runOnce(): Promise<void> {
    // Between pages the requests waiting on the event loop go first (readInto), so a large
    // backlog never stalls them for the whole run.
    this.#running ??= this.#continueAfterPruned()
      .then(() => readInto(this.#store, this.#sink, undefined, this.#pageSize))
      .then(() => {
        this.#lastRunAt = Date.now();
      })
      .catch((error: unknown) => this.#onError(error))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}
