/**
 * What a session stores: items as plain JSON data, copied on the way in so a caller's later
 * change of its own objects changes nothing stored. An item that JSON cannot hold exactly (a Date,
 * a bigint, a binary array, a cycle, a class instance, a hole in an array, a number that is not
 * finite) is refused `invalid_request` before anything is written, naming where it is.
 */
import { FencegateError } from '../../errors.js';
import type { SessionHistoryTransactionArgs } from './agents-types.js';

export function copyItems(items: unknown, field: string): unknown[] {
  if (!Array.isArray(items)) {
    throw new FencegateError('invalid_request', `${field} must be an array of session items`, {
      field,
    });
  }
  return Array.from({ length: items.length }, (_, index) => {
    if (!Object.hasOwn(items, index)) refuse(`${field}[${index}]`, 'is a hole in the array');
    const item: unknown = items[index];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      refuse(`${field}[${index}]`, 'must be an object (a session item)');
    }
    return copyPlain(item, `${field}[${index}]`, new Set());
  });
}

/** The transaction checked and copied, before anything is written. */
export function copyTransaction(args: unknown): SessionHistoryTransactionArgs {
  const given = args as Partial<SessionHistoryTransactionArgs> | null;
  if (given === null || typeof given !== 'object') {
    refuse('args', 'must be an object with operationId and transaction');
  }
  if (typeof given.operationId !== 'string' || given.operationId.trim() === '') {
    refuse('operationId', 'must be a non-empty string');
  }
  const transaction = given.transaction as Record<string, unknown> | null | undefined;
  if (transaction === null || typeof transaction !== 'object') {
    refuse('transaction', 'must be an object');
  }
  if (transaction.type === 'append_items') {
    onlyFields(transaction, ['type', 'items']);
    return {
      operationId: given.operationId,
      transaction: { type: 'append_items', items: copyItems(transaction.items, 'items') as never },
    };
  }
  if (transaction.type === 'replace_suffix') {
    onlyFields(transaction, ['type', 'expectedSuffix', 'replacement']);
    return {
      operationId: given.operationId,
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: copyItems(transaction.expectedSuffix, 'expectedSuffix') as never,
        replacement: copyItems(transaction.replacement, 'replacement') as never,
      },
    };
  }
  return refuse('transaction.type', "must be 'append_items' or 'replace_suffix'");
}

function onlyFields(value: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  if (extra.length > 0) refuse(`transaction.${extra[0]}`, 'is not a field of this transaction');
}

function copyPlain(value: unknown, path: string, ancestors: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) refuse(path, 'is a number JSON cannot hold');
    return value;
  }
  if (typeof value !== 'object') refuse(path, `is a ${typeof value}, which JSON cannot hold`);
  if (ancestors.has(value)) refuse(path, 'refers back to itself');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return Array.from({ length: value.length }, (_, index) => {
        if (!Object.hasOwn(value, index)) refuse(`${path}[${index}]`, 'is a hole in the array');
        return copyPlain(value[index], `${path}[${index}]`, ancestors);
      });
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      refuse(path, 'is not a plain object (a Date, a binary array or a class instance)');
    }
    const copy: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      // An absent field and one set to undefined store the same.
      if (entry !== undefined) copy[key] = copyPlain(entry, `${path}.${key}`, ancestors);
    }
    return copy;
  } finally {
    ancestors.delete(value);
  }
}

function refuse(field: string, problem: string): never {
  throw new FencegateError(
    'invalid_request',
    `session item data ${field} ${problem}; store plain JSON data (strings, finite numbers, booleans, null, arrays, plain objects)`,
    { field },
  );
}
