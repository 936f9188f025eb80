/**
 * The etcd store's paged listings that need more than a key-order scan: the cutovers newest
 * first, and the tenants with open intents (a scope's records: etcd-record-page.ts).
 */
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import type { CutoverRow } from '../../core/plan/transition.js';
import type { CutoverSummary, ListCutoversQuery, Page } from '../../types.js';
import { cutoverRowsPage } from '../plan-rows.js';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import { parseValue, scanPrefix } from './etcd-scan.js';

/** The tenant's cutovers newest first (startedAt, then cutoverId), after the cursor. */
export async function listCutovers(
  connection: EtcdConnection,
  keys: EtcdKeys,
  tenant: string,
  query: ListCutoversQuery,
): Promise<Page<CutoverSummary>> {
  const cutovers: CutoverRow[] = [];
  for await (const kv of scanPrefix(connection, keys.family('c', tenant))) {
    cutovers.push(parseValue<CutoverRow>(kv));
  }
  return cutoverRowsPage(cutovers, query, query.limit ?? DEFAULT_LIST_LIMIT, async (cutoverId) => {
    const steps = Buffer.from(keys.range(tenant, { type: 'cutoverSteps', cutoverId }));
    const moved = await connection.range({
      key: steps,
      range_end: prefixEnd(steps),
      count_only: true,
    });
    return Number(moved.count);
  });
}

/**
 * The tenants with open intents, in name order: one read per such tenant, which then skips past
 * the rest of that tenant's open intents.
 */
export async function listTenantsWithOpenIntents(
  connection: EtcdConnection,
  keys: EtcdKeys,
): Promise<string[]> {
  const family = keys.family('io');
  const end = prefixEnd(Buffer.from(family));
  const tenants: string[] = [];
  let start: Buffer = Buffer.from(family);
  for (;;) {
    const response = await connection.range({
      key: start,
      range_end: end,
      limit: 1,
      keys_only: true,
    });
    const first = response.kvs[0];
    if (first === undefined) return tenants;
    const tenant = first.key.toString().slice(family.length).split('/')[0] ?? '';
    tenants.push(tenant);
    start = prefixEnd(Buffer.from(keys.family('io', tenant)));
  }
}
