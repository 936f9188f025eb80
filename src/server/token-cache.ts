/**
 * Bearer-token lookups, remembered for a short while so a request does not read the token table
 * each time. Revocation is honoured: a token deleted through this server stops working at once
 * (`invalidate()` runs before the deletion is answered, and a lookup that was already under way
 * does not put its older answer back), and a token deleted elsewhere (another server on the same
 * store, `fencegate token revoke`) stops working here within `ttlMs`. Unknown tokens are never
 * remembered, so a token created elsewhere works at once.
 */
import { performance } from 'node:perf_hooks';
import type { Store } from '../store/store.js';
import type { TokenRecord } from '../types.js';

/** How long a looked-up token is trusted without reading the store again. */
export const DEFAULT_TOKEN_CACHE_TTL_MS = 1000;
/** Beyond this many distinct tokens the cache starts over rather than grow. */
const MAX_ENTRIES = 10_000;

interface Entry {
  record: TokenRecord;
  expiresAt: number;
}

export class TokenCache {
  readonly #store: Pick<Store, 'findToken'>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  /** Bumped by invalidate(): a lookup begun under an older generation is not remembered. */
  #generation = 0;

  /** `ttlMs` 0 turns the cache off: every lookup reads the store. */
  constructor(
    store: Pick<Store, 'findToken'>,
    ttlMs: number,
    now: () => number = () => performance.now(),
  ) {
    this.#store = store;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The remembered record of a token still within its ttl, without waiting; else undefined. */
  cached(hash: string): TokenRecord | undefined {
    const entry = this.#entries.get(hash);
    return entry !== undefined && entry.expiresAt > this.#now() ? entry.record : undefined;
  }

  async findToken(hash: string): Promise<TokenRecord | null> {
    const now = this.#now();
    const entry = this.#entries.get(hash);
    if (entry !== undefined && entry.expiresAt > now) return entry.record;
    const generation = this.#generation;
    const record = await this.#store.findToken(hash);
    if (record === null || this.#ttlMs === 0) {
      this.#entries.delete(hash);
      return record;
    }
    if (generation === this.#generation) {
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(hash, { record, expiresAt: now + this.#ttlMs });
    }
    return record;
  }

  /** Forgets every token: called when tokens are deleted or revoked through this server. */
  invalidate(): void {
    this.#generation += 1;
    this.#entries.clear();
  }
}
