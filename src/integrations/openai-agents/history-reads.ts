/**
 * Reading a session's history as one consistent state: the head, then the items it names, then
 * the head again. Every change writes the head, so when its revision did not move between the two
 * reads, the items read are exactly the history at that revision; when it moved, the read starts
 * over.
 */
import type { FencegateApi } from '../../api.js';
import { FencegateError } from '../../errors.js';
import type { RecordState } from '../../types.js';
import {
  HEAD_NAME,
  ITEM_PREFIX,
  itemName,
  parseHead,
  positionOf,
  type HistoryHead,
} from './session-records.js';

/** The head at one revision (0 while the session was never written). */
export interface HeadState {
  head: HistoryHead;
  revision: number;
}

export interface StoredItem {
  position: number;
  revision: number;
  item: unknown;
}

export interface HistoryRead {
  state: HeadState;
  items: StoredItem[];
}

/** Heads that moved under one read before it gives up: only a writer storm does that. */
const MAX_READ_ATTEMPTS = 20;
const PAGE_LIMIT = 1000;

export async function readHead(gate: FencegateApi, scope: string): Promise<HeadState> {
  const record = await gate.getRecord(scope, HEAD_NAME);
  return {
    head: parseHead(record.exists ? record.value : null, scope),
    revision: record.revision,
  };
}

/** The last `limit` items (all of them without a limit), with the head they belong to. */
export async function readHistory(
  gate: FencegateApi,
  scope: string,
  limit?: number,
): Promise<HistoryRead> {
  for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt += 1) {
    const state = await readHead(gate, scope);
    const { first, next } = state.head;
    const from = limit === undefined ? first : Math.max(first, next - limit);
    const items = await readItemsAt(gate, scope, state, from, next);
    if (items !== null) return { state, items };
  }
  throw new FencegateError(
    'store_unavailable',
    `the history of ${scope} changed under ${MAX_READ_ATTEMPTS} reads in a row; try again`,
    { scope },
  );
}

/**
 * The items at positions [from, to) as they are at the head's revision `state`; null when the head
 * moved meanwhile (the caller reads again).
 */
export async function readItemsAt(
  gate: FencegateApi,
  scope: string,
  state: HeadState,
  from: number,
  to: number,
): Promise<StoredItem[] | null> {
  if (from >= to) return [];
  const records = await listRange(gate, scope, from, to);
  const again = await gate.getRecord(scope, HEAD_NAME);
  if (again.revision !== state.revision) return null;
  const items: StoredItem[] = [];
  for (const record of records) {
    if (!record.exists) continue;
    items.push({
      position: positionOf(record.name),
      revision: record.revision,
      item: record.value,
    });
  }
  if (items.length !== to - from) {
    // The head did not move, so the positions it names must all be there.
    throw new FencegateError(
      'invalid_request',
      `scope ${scope} lacks items its session head names (positions ${from} to ${to - 1}); its records were changed outside the session`,
      { scope },
    );
  }
  return items;
}

/** Every record at positions [from, to), following the pages' cursors. */
async function listRange(
  gate: FencegateApi,
  scope: string,
  from: number,
  to: number,
): Promise<RecordState[]> {
  const end = itemName(to);
  const records: RecordState[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await gate.listRecordsPage(
      scope,
      cursor !== undefined
        ? { prefix: ITEM_PREFIX, cursor, limit: PAGE_LIMIT }
        : {
            prefix: ITEM_PREFIX,
            limit: Math.min(PAGE_LIMIT, to - from),
            ...(from > 0 ? { after: itemName(from - 1) } : {}),
          },
    );
    for (const record of page.items) {
      if (record.name >= end) return records;
      records.push(record);
    }
    if (page.nextCursor === null) return records;
    cursor = page.nextCursor;
  }
}
