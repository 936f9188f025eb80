/**
 * Opens a store from its URL: `sqlite:PATH[?synchronous=normal]`, `sqlite::memory:`, `postgres://…`,
 * `etcd://…`, or a kind registered with `registerStoreKind` (the kinds of store/registry.ts).
 */
import type { Clock } from '../core/clock.js';
import { fail } from '../errors.js';
import { loadStoreKind, storeKindNames, storeKindOf, storeUrlForms } from './registry.js';
import type { Store } from './store.js';

export interface OpenStoreOptions {
  clock?: Clock;
  /** Batch concurrent commits into one store round trip (the server turns this on). */
  groupCommit?: boolean;
  /**
   * The deadlines of a store that has them (etcd): of one call to one member, and of one
   * operation. A batch run such as the demo, whose caller waits anyway, may want longer ones
   * than a server's, which must answer below its clients' timeouts.
   */
  deadlines?: { callMs: number; operationMs: number };
}

export const DEFAULT_STORE_URL = 'sqlite:./fencegate.db';

export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const kind = storeKindOf(url);
  if (kind === undefined) {
    return fail(
      'invalid_request',
      `unsupported store URL ${redactUrl(url)}: the store kinds are ${storeKindNames()}; ` +
        `use ${storeUrlForms()}`,
    );
  }
  const open = await loadStoreKind(kind);
  return open(url, options);
}

/**
 * A store URL without its password, for messages and logs: the user part's (up to the last @
 * before the host, as a password may hold an unencoded @) and the query's password parameters.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/\/\/([^:/@]+):[^/]*@/, '//$1:***@')
    .replace(/([?&](?:password|sslpassword)=)[^&]*/gi, '$1***');
}
