/**
 * The optional per-tenant rate of `fencegate serve --tenant-rate`: a token bucket per tenant,
 * refilled at `perSecond` up to `burst`. A request of a tenant whose bucket cannot pay for it is
 * answered 429 rate_limited before it reaches the store, so a tenant's storm costs the server one
 * map lookup per request beyond its rate, and the store's batches stay open to other tenants.
 */
import { FencegateError } from '../errors.js';

export interface TenantRateLimit {
  /** Requests (a batch counts its commits) each tenant may send per second, sustained. */
  perSecond: number;
  /** The most a tenant may send at once after being idle (default: one second's worth). */
  burst?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept at most; past it, the buckets already full (idle tenants) are dropped. */
const MAX_BUCKETS = 10_000;

export class TenantRateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    limit: TenantRateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#perMs = limit.perSecond / 1000;
    this.#burst = limit.burst ?? Math.max(1, limit.perSecond);
  }

  /** Takes `cost` for `tenant`, or throws rate_limited saying when the request would fit. */
  take(tenant: string, cost: number): void {
    const now = this.now();
    const bucket = this.#bucketOf(tenant, now);
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    // A batch larger than the burst is admitted once the bucket is full, never refused forever.
    const needed = Math.min(cost, this.#burst);
    if (bucket.tokens >= needed) {
      bucket.tokens -= cost;
      return;
    }
    const retryAfterMs = Math.ceil((needed - bucket.tokens) / this.#perMs);
    throw new FencegateError(
      'rate_limited',
      `this tenant is over its rate (${this.#perMs * 1000} requests a second, ${this.#burst} at once); nothing was changed: send it again in ${retryAfterMs} ms`,
      { retryAfterMs, perSecond: this.#perMs * 1000, burst: this.#burst },
    );
  }

  #bucketOf(tenant: string, now: number): Bucket {
    let bucket = this.#buckets.get(tenant);
    if (bucket === undefined) {
      if (this.#buckets.size >= MAX_BUCKETS) this.#dropFull(now);
      bucket = { tokens: this.#burst, at: now };
      this.#buckets.set(tenant, bucket);
    }
    return bucket;
  }

  #dropFull(now: number): void {
    for (const [tenant, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) * this.#perMs >= this.#burst) {
        this.#buckets.delete(tenant);
      }
    }
  }
}

/** The Retry-After header's value: whole seconds, at least 1. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}
