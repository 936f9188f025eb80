/**
 * One page of a scope's records on etcd, within the page's byte budget (core/answer-budget.ts).
 * etcd cannot total the bytes of a range for us, so every read takes a few records at a time, at
 * the revision of the page's first read (one snapshot), and the page stops reading once its
 * budget is spent: the process holds at most the budget and one read more, however large the
 * scope or the limit.
 */
import { SortOrder, SortTarget, type IKeyValue } from 'etcd3';
import { itemsWithinBudget, jsonTextBytes } from '../../core/answer-budget.js';
import type { RecordRow } from '../../core/plan/transition.js';
import {
  recordPage,
  resolveRecordPage,
  type RecordPageQuery,
  type SizedRecord,
  type SizedPage,
} from '../../core/record-page.js';
import type { ListRecordsQuery, RecordState } from '../../types.js';
import { recordStateOf } from '../plan-rows.js';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import { afterKey, parseValue } from './etcd-scan.js';

/** Records per range read: each may hold a 256 KiB value. */
const RECORDS_PER_READ = 16;

interface ScopeRange {
  connection: EtcdConnection;
  scope: string;
  /** The key prefix of the scope's records; a record's key is it and the record's name. */
  scopePrefix: string;
  /** The first key of the range and the key past its last one. */
  start: Buffer;
  end: Buffer;
}

/**
 * Name order is key order: range reads in the page's direction. Revision order has no key of its
 * own (an index would cost every record write a second key), so it reads every revision under the
 * prefix, keeping no value, sorts them here, and then reads the values of the records the page
 * holds.
 */
export async function listRecordsPage(
  connection: EtcdConnection,
  keys: EtcdKeys,
  tenant: string,
  scope: string,
  query: ListRecordsQuery,
  maxBytes: number,
): Promise<SizedPage> {
  const page = resolveRecordPage(query, maxBytes);
  const scopePrefix = keys.range(tenant, { type: 'scopeRecords', scope });
  const namePrefix = Buffer.from(scopePrefix + page.prefix);
  const range: ScopeRange = {
    connection,
    scope,
    scopePrefix,
    start: namePrefix,
    end: prefixEnd(namePrefix),
  };
  return recordPage(
    page.order === 'name' ? await byName(range, page) : await byRevision(range, page),
    page,
  );
}

async function byName(range: ScopeRange, page: RecordPageQuery): Promise<SizedRecord[]> {
  let { start, end } = range;
  if (page.position !== null) {
    const at = Buffer.from(range.scopePrefix + page.position.name);
    if (page.descending) end = Buffer.compare(at, end) < 0 ? at : end;
    else start = Buffer.compare(afterKey(at), start) > 0 ? afterKey(at) : start;
  }
  const records: SizedRecord[] = [];
  let revision: string | undefined;
  while (Buffer.compare(start, end) < 0 && !pageComplete(records, page)) {
    const response = await range.connection.range({
      key: start,
      range_end: end,
      limit: Math.min(RECORDS_PER_READ, page.limit + 1 - records.length),
      sort_target: SortTarget.Key,
      sort_order: page.descending ? SortOrder.Descend : SortOrder.Ascend,
      ...(revision === undefined ? {} : { revision }),
    });
    revision ??= response.header.revision;
    records.push(...response.kvs.map((kv) => sized(range, kv)));
    const last = response.kvs.at(-1);
    if (!response.more || last === undefined) break;
    if (page.descending) end = last.key;
    else start = afterKey(last.key);
  }
  return records;
}

async function byRevision(range: ScopeRange, page: RecordPageQuery): Promise<SizedRecord[]> {
  const sign = page.descending ? -1 : 1;
  const order = (a: { revision: number; key: Buffer }, b: { revision: number; key: Buffer }) =>
    sign * (a.revision - b.revision || Buffer.compare(a.key, b.key));
  const position =
    page.position === null
      ? null
      : {
          revision: page.position.revision,
          key: Buffer.from(range.scopePrefix + page.position.name),
        };
  const revisions: { key: Buffer; revision: number; bytes: number }[] = [];
  let start = range.start;
  let revision: string | undefined;
  for (;;) {
    const response = await range.connection.range({
      key: start,
      range_end: range.end,
      limit: RECORDS_PER_READ,
      ...(revision === undefined ? {} : { revision }),
    });
    revision ??= response.header.revision;
    for (const kv of response.kvs) {
      const row = parseValue<RecordRow>(kv);
      const entry = { key: kv.key, revision: row.revision, bytes: jsonTextBytes(row.valueJson) };
      if (position === null || order(entry, position) > 0) revisions.push(entry);
    }
    const last = response.kvs.at(-1);
    if (!response.more || last === undefined) break;
    start = afterKey(last.key);
  }
  const selected = revisions.sort(order).slice(0, page.limit + 1);
  const kept = itemsWithinBudget(
    selected.map(({ bytes }) => bytes),
    page.limit,
    page.maxBytes,
  );
  const records: SizedRecord[] = [];
  for (let at = 0; at < kept; at += RECORDS_PER_READ) {
    const reads = selected
      .slice(at, Math.min(kept, at + RECORDS_PER_READ))
      .map(({ key }) =>
        range.connection.range({ key, ...(revision === undefined ? {} : { revision }) }),
      );
    for (const response of await Promise.all(reads)) {
      records.push(...response.kvs.map((kv) => sized(range, kv)));
    }
  }
  // The first record past the page only tells that another page follows: its value is not read.
  const next = selected[kept];
  if (next !== undefined) records.push({ record: nameOnly(range, next.key), bytes: next.bytes });
  return records;
}

/** Whether the records read already hold the page and one record more. */
function pageComplete(records: SizedRecord[], page: RecordPageQuery): boolean {
  const sizes = records.map(({ bytes }) => bytes);
  return itemsWithinBudget(sizes, page.limit, page.maxBytes) < records.length;
}

function sized(range: ScopeRange, kv: IKeyValue): SizedRecord {
  const row = parseValue<RecordRow>(kv);
  return {
    record: recordStateOf(range.scope, kv.key.toString().slice(range.scopePrefix.length), row),
    bytes: jsonTextBytes(row.valueJson),
  };
}

function nameOnly(range: ScopeRange, key: Buffer): RecordState {
  return recordStateOf(range.scope, key.toString().slice(range.scopePrefix.length), null);
}
