/**
 * Where a session's history lives: one fencegate scope per session, and inside it
 *
 *   head                        where the history starts and ends (HistoryHead), written by every
 *                               change, so its revision orders all of them
 *   it/<position>               one item, at a position; positions count up, zero-padded so that
 *                               name order is history order
 *   op/<epoch>/<digest>         an applied history transaction: its operation id's digest, and the
 *                               fingerprint of the transaction as its value
 *
 * The history is the items at positions [first, next). Appends write at `next`; a clear or a
 * compaction moves `first` past everything it removes, and the records left below `first` are
 * collected afterwards. A pop moves `next` back and leaves its record in place: the head keeps
 * that record's revision in `stale`, so the write that reuses the position expects it.
 */
import { sha256Hex } from '../../core/canonical.js';
import { FencegateError } from '../../errors.js';

export const DEFAULT_SESSION_SCOPE_PREFIX = 'openai-agents/';
export const HEAD_NAME = 'head';
export const ITEM_PREFIX = 'it/';
export const OPERATION_PREFIX = 'op/';
const POSITION_DIGITS = 15;

export interface HistoryHead {
  first: number;
  next: number;
  /** Moves on every clear: operation ids recorded before it may be applied again. */
  epoch: number;
  /** Moves on every change that is not an append (pop, replace, clear, compaction). */
  cut: number;
  /** Revisions of records left at positions >= next by pops and replacements, by position. */
  stale: Record<string, number>;
}

export const EMPTY_HEAD: HistoryHead = { first: 0, next: 0, epoch: 0, cut: 0, stale: {} };

export function itemName(position: number): string {
  return `${ITEM_PREFIX}${String(position).padStart(POSITION_DIGITS, '0')}`;
}

export function positionOf(name: string): number {
  return Number(name.slice(ITEM_PREFIX.length));
}

export function operationPrefix(epoch: number): string {
  return `${OPERATION_PREFIX}${epoch}/`;
}

export function operationName(epoch: number, operationId: string): string {
  return `${operationPrefix(epoch)}${sha256Hex(operationId).slice(0, 40)}`;
}

export function epochOf(operationRecordName: string): number {
  return Number(operationRecordName.slice(OPERATION_PREFIX.length).split('/')[0]);
}

/** The head as stored; a record that is not one is refused rather than guessed at. */
export function parseHead(value: unknown, scope: string): HistoryHead {
  if (value === null || value === undefined) return EMPTY_HEAD;
  const head = value as Partial<HistoryHead>;
  const counters = [head.first, head.next, head.epoch, head.cut];
  if (
    counters.every((n) => Number.isSafeInteger(n) && (n as number) >= 0) &&
    (head.first as number) <= (head.next as number) &&
    typeof head.stale === 'object' &&
    head.stale !== null
  ) {
    return head as HistoryHead;
  }
  throw new FencegateError(
    'invalid_request',
    `the record ${HEAD_NAME} of scope ${scope} is not a session history head; the scope holds something else: give the session another scopePrefix`,
    { scope, name: HEAD_NAME },
  );
}
