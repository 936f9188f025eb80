/**
 * MemoryConflictError: a FencedStore put (or delete) whose precondition did not hold: the item
 * was written (or deleted) since the revision the caller read, or `ifAbsent` found it present.
 * Nothing was written. It carries the item as it is now, so the caller can decide again on the
 * new value and retry with its revision.
 */
import type { Item } from '@langchain/langgraph-checkpoint';
import { FencegateError, isFencegateError } from '../../errors.js';

/** An item with the revision a conditional put expects (`ifRevision`). */
export interface MemoryItem extends Item {
  revision: number;
}

export class MemoryConflictError extends FencegateError {
  readonly isMemoryConflictError = true;
  readonly namespace: string[];
  readonly key: string;
  /** The item now; null when it does not exist. */
  readonly current: MemoryItem | null;

  constructor(namespace: string[], key: string, expected: string, current: MemoryItem | null) {
    const now = current === null ? 'absent' : `at revision ${current.revision}`;
    super(
      'stale_revision',
      `memory ${JSON.stringify(namespace)}/${JSON.stringify(key)} was expected ${expected} but is ${now}; nothing was written. Read it again, decide on the current value and put with ifRevision: ${current?.revision ?? 0}`,
      { namespace, key, expected, actual: current?.revision ?? null, exists: current !== null },
    );
    this.name = 'MemoryConflictError';
    this.namespace = namespace;
    this.key = key;
    this.current = current;
  }
}

/** True for a MemoryConflictError, also one created by another installed copy of this package. */
export function isMemoryConflictError(value: unknown): value is MemoryConflictError {
  return (
    isFencegateError(value) &&
    (value as { isMemoryConflictError?: unknown }).isMemoryConflictError === true
  );
}
