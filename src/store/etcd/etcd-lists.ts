/**
 * The etcd store's paged listings that need more than a key-order scan: a scope's records (by
 * name or by revision), the cutovers newest first, and the tenants with open intents.
 */
import { SortOrder, SortTarget } from 'etcd3';
import { DEFAULT_LIST_LIMIT } from '../../core/limits.js';
import type { CutoverRow, RecordRow } from '../../core/plan/transition.js';
import { recordPage, resolveRecordPage } from '../../core/record-page.js';
import type {
  CutoverSummary,
  ListCutoversQuery,
  ListRecordsQuery,
  Page,
  RecordState,
} from '../../types.js';
import { cutoverRowsPage, recordStateOf } from '../plan-rows.js';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import { afterKey, parseValue, scanPrefix } from './etcd-scan.js';

/**
 * One page of a scope's records. Name order is key order: one range read of limit + 1 keys, in
 * either direction. Revision order has no key of its own (an index would cost every record write
 * a second key), so it reads the scope's records under the prefix and sorts them here.
 */
export async function listRecordsPage(
  connection: EtcdConnection,
  keys: EtcdKeys,
  tenant: string,
  scope: string,
  query: ListRecordsQuery,
): Promise<Page<RecordState>> {
  const page = resolveRecordPage(query);
  const scopePrefix = keys.range(tenant, { type: 'scopeRecords', scope });
  const namePrefix = Buffer.from(scopePrefix + page.prefix);
  const toState = (key: Buffer, row: RecordRow): RecordState =>
    recordStateOf(scope, key.toString().slice(scopePrefix.length), row);
  if (page.order === 'name') {
    let start: Buffer = namePrefix;
    let end: Buffer = prefixEnd(namePrefix);
    if (page.position !== null) {
      const at = Buffer.from(scopePrefix + page.position.name);
      if (page.descending) end = Buffer.compare(at, end) < 0 ? at : end;
      else start = Buffer.compare(afterKey(at), start) > 0 ? afterKey(at) : start;
    }
    const response =
      Buffer.compare(start, end) >= 0
        ? { kvs: [] }
        : await connection.range({
            key: start,
            range_end: end,
            limit: page.limit + 1,
            sort_target: SortTarget.Key,
            sort_order: page.descending ? SortOrder.Descend : SortOrder.Ascend,
          });
    return recordPage(
      response.kvs.map((kv) => toState(kv.key, parseValue<RecordRow>(kv))),
      page,
    );
  }
  const records: { key: Buffer; row: RecordRow }[] = [];
  for await (const kv of scanPrefix(connection, namePrefix.toString())) {
    records.push({ key: kv.key, row: parseValue<RecordRow>(kv) });
  }
  const sign = page.descending ? -1 : 1;
  const order = (revision: number, key: Buffer, other: { revision: number; key: Buffer }) =>
    sign * (revision - other.revision || Buffer.compare(key, other.key));
  const position =
    page.position === null
      ? null
      : { revision: page.position.revision, key: Buffer.from(scopePrefix + page.position.name) };
  const selected = records
    .filter(({ key, row }) => position === null || order(row.revision, key, position) > 0)
    .sort((a, b) => order(a.row.revision, a.key, { revision: b.row.revision, key: b.key }))
    .slice(0, page.limit + 1);
  return recordPage(
    selected.map(({ key, row }) => toState(key, row)),
    page,
  );
}

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
