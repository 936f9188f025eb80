/**
 * The verifier's replay state as plain JSON data, so a later run continues after `lastSeq` without
 * re-reading history. Tuples rather than objects keep it compact: one scope or one delivered
 * effect is one short array. Record names are never used as object keys (a name may be
 * `__proto__`).
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { fail } from '../errors.js';
import { isAttemptCheckpoint, type AttemptCheckpoint } from './delivery-attempts.js';

export const CHECKPOINT_VERSION = 1;

/** [name, revision] */
export type RecordCheckpoint = [string, number];

/**
 * [tenant, scope, fence, holder, leaseExpiresAt, status, policyVersion, cutoverFence, records]
 * cutoverFence is the fence the latest cutover of the scope issued (0 = never cut over).
 */
export type ScopeCheckpoint = [
  string,
  string,
  number,
  string | null,
  number | null,
  'active' | 'deleted',
  string | null,
  number,
  RecordCheckpoint[],
];

/** [tenant, effectKey, seq of the delivery] */
export type DeliveredCheckpoint = [string, string, number];

export interface VerifyCheckpoint {
  version: typeof CHECKPOINT_VERSION;
  /** The tenant whose history was read; null = every tenant. */
  tenant: string | null;
  /** seq of the last entry verified; null = none yet. */
  lastSeq: number | null;
  /** Entries verified in all runs up to this checkpoint. */
  checked: number;
  /** Violations found in all runs up to this checkpoint. */
  violations: number;
  scopes: ScopeCheckpoint[];
  delivered: DeliveredCheckpoint[];
  /** Delivery attempts per intent (absent in checkpoints made before they were followed). */
  attempts?: AttemptCheckpoint[];
  /**
   * The id of the store whose log was verified (checkpoint-identity.ts); absent in checkpoints
   * made before checkpoints named their store, or of a store without an id.
   */
  storeId?: string;
  /** The hash of the entry at lastSeq; null when unknown, absent in older checkpoints. */
  lastHash?: string | null;
}

export function emptyCheckpoint(tenant: string | null = null): VerifyCheckpoint {
  return {
    version: CHECKPOINT_VERSION,
    tenant,
    lastSeq: null,
    checked: 0,
    violations: 0,
    scopes: [],
    delivered: [],
    attempts: [],
  };
}

/** Writes the checkpoint as JSON; a crash mid-write leaves the previous file intact. */
export async function saveCheckpoint(path: string, checkpoint: VerifyCheckpoint): Promise<void> {
  const temporary = `${path}.tmp`;
  await writeFile(temporary, JSON.stringify(checkpoint));
  await rename(temporary, path);
}

/** The checkpoint stored at `path`, or null when there is no file. Throws invalid_request when it is not one. */
export async function loadCheckpoint(path: string): Promise<VerifyCheckpoint | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('invalid_request', `checkpoint file ${path} is not JSON`);
  }
  return parseCheckpoint(parsed);
}

/** Checks the shape of checkpoint data read from outside (a file, a request). */
export function parseCheckpoint(value: unknown): VerifyCheckpoint {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid('it is not an object');
  const data = value as Record<string, unknown>;
  if (data.version !== CHECKPOINT_VERSION) invalid(`version must be ${CHECKPOINT_VERSION}`);
  if (!isNullableString(data.tenant)) invalid('tenant must be a string or null');
  if (data.lastSeq !== null && !isCount(data.lastSeq))
    invalid('lastSeq must be an integer or null');
  if (!isCount(data.checked) || !isCount(data.violations))
    invalid('checked and violations must be counts');
  if (!Array.isArray(data.scopes) || !data.scopes.every(isScopeCheckpoint))
    invalid('scopes are malformed');
  if (!Array.isArray(data.delivered) || !data.delivered.every(isDeliveredCheckpoint)) {
    invalid('delivered effects are malformed');
  }
  if (
    data.attempts !== undefined &&
    (!Array.isArray(data.attempts) || !data.attempts.every(isAttemptCheckpoint))
  ) {
    invalid('delivery attempts are malformed');
  }
  if (data.storeId !== undefined && typeof data.storeId !== 'string') {
    invalid('storeId must be a string');
  }
  if (data.lastHash !== undefined && !isNullableString(data.lastHash)) {
    invalid('lastHash must be a string or null');
  }
  return data as unknown as VerifyCheckpoint;
}

function invalid(why: string): never {
  return fail('invalid_request', `not a verify checkpoint: ${why}`);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isNullableString(value: unknown): boolean {
  return value === null || typeof value === 'string';
}

function isScopeCheckpoint(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 9 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    isCount(value[2]) &&
    isNullableString(value[3]) &&
    (value[4] === null || Number.isSafeInteger(value[4])) &&
    (value[5] === 'active' || value[5] === 'deleted') &&
    isNullableString(value[6]) &&
    isCount(value[7]) &&
    Array.isArray(value[8]) &&
    (value[8] as unknown[]).every(
      (record) =>
        Array.isArray(record) &&
        record.length === 2 &&
        typeof record[0] === 'string' &&
        isCount(record[1]),
    )
  );
}

function isDeliveredCheckpoint(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length === 3 &&
    typeof value[0] === 'string' &&
    typeof value[1] === 'string' &&
    isCount(value[2])
  );
}
