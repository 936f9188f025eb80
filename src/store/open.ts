/**
 * Opens a store from its URL: `sqlite:PATH[?synchronous=normal]`, `sqlite::memory:`, `postgres://…`,
 * `etcd://…` (the kinds of store/registry.ts).
 */
import type { Clock } from '../core/clock.js';
import { fail } from '../errors.js';
import { loadStoreKind, storeKindOf, storeUrlForms } from './registry.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  clock?: Clock;
  /** Batch concurrent commits into one store round trip (the server turns this on). */
  groupCommit?: boolean;
}

export const DEFAULT_STORE_URL = 'sqlite:./fencegate.db';

export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const kind = storeKindOf(url);
  if (kind === undefined) {
    return fail(
      'invalid_request',
      `unsupported store URL ${redactUrl(url)}; use ${storeUrlForms()}`,
    );
  }
  const open = await loadStoreKind(kind);
  return open(url, options);
}

/** A store URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
