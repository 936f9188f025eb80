/**
 * One page of a scope's records on etcd, within the page's byte budget (core/answer-budget.ts).
 * etcd cannot total the bytes of a range for us, so every read takes a few records at a time, at
 * the revision of the page's first read (one snapshot), and the page stops reading once its
 * budget is spent: the process holds at most the budget and one read more, however large the
 * scope or the limit.
 */
import { SortOrder, SortTarget, type IKeyValue } from 'etcd3';
import { fail } from '../../errors.js';
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
 * own (an index would cost every record write a second key): see byRevision.
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

/**
 * Revision order reads the keys under the prefix without their values (a record's revision is its
 * key's version: a record key is put once for every revision of the record and never deleted, a
 * tombstone included), sorts them here and takes the page's keys, then reads only their values, 16
 * at a time, until the page's budget is spent. The keys still cost in proportion to the scope;
 * the values, which hold its bytes, only in proportion to the page.
 */
async function byRevision(range: ScopeRange, page: RecordPageQuery): Promise<SizedRecord[]> {
  const sign = page.descending ? -1 : 1;
  const order = (a: KeyRevision, b: KeyRevision) =>
    sign * (a.revision - b.revision || Buffer.compare(a.key, b.key));
  const position =
    page.position === null
      ? null
      : {
          revision: page.position.revision,
          key: Buffer.from(range.scopePrefix + page.position.name),
        };
  const { keys, revision } = await revisionsOf(range);
  const selected = keys
    .filter((entry) => position === null || order(entry, position) > 0)
    .sort(order)
    .slice(0, page.limit + 1);
  const records: SizedRecord[] = [];
  const onPage = selected.slice(0, page.limit);
  for (let at = 0; at < onPage.length && !pageComplete(records, page); at += RECORDS_PER_READ) {
    const reads = onPage
      .slice(at, at + RECORDS_PER_READ)
      .map(({ key }) => range.connection.range({ key, revision }));
    for (const response of await Promise.all(reads)) {
      for (const kv of response.kvs) records.push(sizedAt(range, kv, Number(kv.version)));
    }
  }
  // The first record past the page only tells that another page follows: its value is not read.
  const next = selected[page.limit];
  if (next !== undefined && records.length === page.limit) {
    records.push({ record: nameOnly(range, next.key), bytes: 0 });
  }
  return records;
}

interface KeyRevision {
  key: Buffer;
  revision: number;
}

/** Keys read per range read when no value comes with them. */
const KEYS_PER_READ = 1000;

/** Every key of the range with its record's revision, at one etcd revision, without values. */
async function revisionsOf(
  range: ScopeRange,
): Promise<{ keys: KeyRevision[]; revision: string | undefined }> {
  const keys: KeyRevision[] = [];
  let start = range.start;
  let revision: string | undefined;
  for (;;) {
    const response = await range.connection.range({
      key: start,
      range_end: range.end,
      limit: KEYS_PER_READ,
      keys_only: true,
      ...(revision === undefined ? {} : { revision }),
    });
    revision ??= response.header.revision;
    for (const kv of response.kvs) keys.push({ key: kv.key, revision: Number(kv.version) });
    const last = response.kvs.at(-1);
    if (!response.more || last === undefined) break;
    start = afterKey(last.key);
  }
  return { keys, revision };
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

/** A record read for a revision-order page, which its key's version placed there. */
function sizedAt(range: ScopeRange, kv: IKeyValue, version: number): SizedRecord {
  const read = sized(range, kv);
  if (read.record.revision !== version) {
    // The page would be out of order: answer nothing rather than a wrong page.
    fail(
      'internal_error',
      `record ${read.record.name} of scope ${range.scope} is at revision ${read.record.revision} ` +
        `but its etcd key at version ${version}: a key was written outside fencegate`,
    );
  }
  return read;
}

function nameOnly(range: ScopeRange, key: Buffer): RecordState {
  return recordStateOf(range.scope, key.toString().slice(range.scopePrefix.length), null);
}
