/**
 * Paging through a scope's records: query validation and the cursor, shared by every adapter so a
 * cursor from one entry point reads the same on another. A cursor names the last record of a page
 * (and its revision, in revision order), so a page never re-reads what an earlier one returned and
 * never loads the scope's other records. A page also ends where its values reach the byte budget
 * (answer-budget.ts): it then holds fewer than `limit` records and still carries a cursor.
 */
import { fail } from '../errors.js';
import { itemsWithinBudget } from './answer-budget.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT, NAME_PATTERN, type Limits } from './limits.js';
import { requireInteger, requireName, requireObject } from './validate.js';
import type { ListRecordsQuery, Page, RecordOrder, RecordState } from '../types.js';

const ORDERS: readonly RecordOrder[] = ['name', 'revision'];
const DIRECTIONS = ['asc', 'desc'] as const;
const MAX_CURSOR_LENGTH = 1024;

/** Where a page starts: past this name (and, in revision order, this revision). */
export interface RecordPosition {
  name: string;
  revision: number;
}

/** A validated query with every default filled in, ready for an adapter's SQL. */
export interface RecordPageQuery {
  prefix: string;
  order: RecordOrder;
  descending: boolean;
  /** null: the page starts at the first record in the listing's direction. */
  position: RecordPosition | null;
  limit: number;
  /** Bytes of values the page holds at most past its first record. */
  maxBytes: number;
}

/** A record as a store read it for a page, with the bytes of its value's JSON text. */
export interface SizedRecord {
  record: RecordState;
  bytes: number;
}

export function validateListRecords(
  input: unknown,
  limits: Limits = DEFAULT_LIMITS,
): ListRecordsQuery {
  const query = requireObject(input ?? {}, 'query', [
    'prefix',
    'order',
    'direction',
    'after',
    'limit',
    'cursor',
  ]);
  const result: ListRecordsQuery = {};
  if (query.prefix !== undefined && query.prefix !== '') {
    result.prefix = requireName(query.prefix, 'prefix');
  }
  if (query.order !== undefined) {
    if (!ORDERS.includes(query.order as RecordOrder)) {
      fail('invalid_request', `order must be one of ${ORDERS.join(', ')}`, { field: 'order' });
    }
    result.order = query.order as RecordOrder;
  }
  if (query.direction !== undefined) {
    if (!DIRECTIONS.includes(query.direction as 'asc')) {
      fail('invalid_request', 'direction must be asc or desc', { field: 'direction' });
    }
    result.direction = query.direction as 'asc' | 'desc';
  }
  if (query.after !== undefined) {
    if (result.order === 'revision') {
      fail('invalid_request', 'after applies to name order only; page revision order by cursor', {
        field: 'after',
      });
    }
    result.after = requireName(query.after, 'after');
  }
  if (query.limit !== undefined) {
    result.limit = requireInteger(query.limit, 'limit', 1, limits.maxListLimit);
  }
  if (query.cursor !== undefined) {
    if (typeof query.cursor !== 'string' || query.cursor.length > MAX_CURSOR_LENGTH) {
      fail('invalid_request', 'cursor must be a nextCursor from an earlier page', {
        field: 'cursor',
      });
    }
    decodeRecordCursor(query.cursor, result.order ?? 'name');
    result.cursor = query.cursor;
  }
  return result;
}

/** Fills in the defaults of a validated query; the cursor, when present, wins over `after`. */
export function resolveRecordPage(query: ListRecordsQuery, maxBytes: number): RecordPageQuery {
  const order = query.order ?? 'name';
  let position: RecordPosition | null = null;
  if (query.cursor !== undefined) position = decodeRecordCursor(query.cursor, order);
  else if (query.after !== undefined) position = { name: query.after, revision: 0 };
  return {
    prefix: query.prefix ?? '',
    order,
    descending: query.direction === 'desc',
    position,
    limit: query.limit ?? DEFAULT_LIST_LIMIT,
    maxBytes,
  };
}

/** Every name is below U+FFFF, so prefix + U+FFFF bounds the names that start with prefix. */
export function prefixEnd(prefix: string): string {
  return `${prefix}\uffff`;
}

/** A page as a store answers it, with the bytes of its values (what it spent of its budget). */
export interface SizedPage extends Page<RecordState> {
  bytes: number;
}

/**
 * The page of the records an adapter read in the listing's order: those within the limit and the
 * byte budget. An adapter reads one record more than the page holds (whose value it may leave
 * out) to learn whether another page follows.
 */
export function recordPage(records: SizedRecord[], query: RecordPageQuery): SizedPage {
  const kept = itemsWithinBudget(
    records.map(({ bytes }) => bytes),
    query.limit,
    query.maxBytes,
  );
  const page = records.slice(0, kept);
  const last = page.at(-1)?.record;
  const more = records.length > kept && last !== undefined;
  return {
    items: page.map(({ record }) => record),
    nextCursor: more ? encodeRecordCursor(last, query.order) : null,
    bytes: page.reduce((sum, { bytes }) => sum + bytes, 0),
  };
}

/**
 * A cursor that reads the page from where it starts: its own cursor or `after`, or else the
 * first record of the listing's direction (a position before every name, or past the last).
 */
export function startCursor(query: RecordPageQuery): string {
  return encodeRecordCursor(query.position ?? listingStart(query), query.order);
}

/** The position before the first record of the listing's direction. */
export function listingStart(query: RecordPageQuery): RecordPosition {
  return query.descending
    ? { name: prefixEnd(query.prefix), revision: Number.MAX_SAFE_INTEGER }
    : { name: '', revision: 0 };
}

function encodeRecordCursor(record: RecordPosition, order: RecordOrder): string {
  const key = order === 'name' ? `n:${record.name}` : `r:${record.revision}:${record.name}`;
  return Buffer.from(key, 'utf8').toString('base64url');
}

function decodeRecordCursor(cursor: string, order: RecordOrder): RecordPosition {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  // An empty name is the start of a listing (startCursor).
  const match = order === 'name' ? /^n:(.*)$/s.exec(key) : /^r:(\d{1,16}):(.*)$/s.exec(key);
  if (match === null) {
    fail('invalid_request', `cursor is not a nextCursor of a listing in ${order} order`, {
      field: 'cursor',
    });
  }
  const position =
    order === 'name'
      ? { name: match[1] ?? '', revision: 0 }
      : { name: match[2] ?? '', revision: Number(match[1]) };
  if (!isCursorName(position.name)) {
    fail('invalid_request', `cursor does not name a record: ${CURSOR_RULE}`, {
      field: 'cursor',
    });
  }
  return position;
}

const CURSOR_RULE =
  'pass the nextCursor of an earlier page as it was answered, whose name part is a record name';

/**
 * A cursor's name is a record name, or one of the positions startCursor writes: before every name
 * (empty) or past every name under a prefix (the prefix and U+FFFF). Anything else never came
 * from a page, and would reach a store's query as a string no record name can be.
 */
function isCursorName(name: string): boolean {
  const bare = name.endsWith('\uffff') ? name.slice(0, -1) : name;
  return bare === '' || NAME_PATTERN.test(bare);
}
