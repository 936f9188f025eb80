/**
 * What one store transaction can hold, as a store declares it (Store.capabilities.transaction), and
 * the commit limits derived from it. A commit is one transaction on every store; on a store with
 * bounded transactions (etcd: --max-txn-ops, --max-request-bytes) a commit that cannot fit is
 * refused here with invalid_request naming the limit, before the store is touched, never with a
 * store error. The count follows the rows every store's commit plan reads and writes
 * (core/plan/plan-commit.ts): the stored outcome, the scope, the fence grant, each record read or
 * written, each intent, and one audit key; a delete writes the record's tombstone and its deletion
 * marker; an intent writes the keys the store keeps per intent; a release writes the scope and the
 * job's row.
 */
import { fail } from '../errors.js';
import { payloadJson, valueJson } from './prepared-value.js';

export interface TransactionCapabilities {
  /** Most keys one transaction may compare, and most it may write; null when unbounded. */
  maxOps: number | null;
  /** Largest transaction request in bytes; null when unbounded. */
  maxBytes: number | null;
  /** Keys written per intent: the intent and the indexes the store keeps beside it. */
  keysPerIntent: number;
  /** Copies of an intent's payload among those keys. */
  payloadCopiesPerIntent: number;
}

export const UNBOUNDED_TRANSACTIONS: TransactionCapabilities = {
  maxOps: null,
  maxBytes: null,
  keysPerIntent: 1,
  payloadCopiesPerIntent: 1,
};

/** Bytes a key and a row's fields take beside the value itself, per key written. */
const KEY_OVERHEAD_BYTES = 512;

interface CommitShape {
  scope: string;
  reads: { scope: string; name: string }[];
  writes: ({ name: string; value: unknown } | { name: string; delete: true })[];
  intents: { payload: unknown }[];
  release?: true;
  job?: unknown;
}

export interface CommitFootprint {
  /** Keys the commit reads and compares. */
  compares: number;
  /** Keys the commit writes. */
  writes: number;
  /** Approximate request bytes. */
  bytes: number;
}

export function commitFootprint(
  request: CommitShape,
  capabilities: TransactionCapabilities,
): CommitFootprint {
  const records = new Set(request.reads.map((read) => `${read.scope}\0${read.name}`));
  let writes = 2; // the stored outcome and the audit key
  let bytes = 0;
  for (const write of request.writes) {
    records.add(`${request.scope}\0${write.name}`);
    if ('delete' in write) {
      writes += 2;
    } else {
      writes += 1;
      // The value is stored as JSON text inside the record's row: escaped once more.
      bytes += JSON.stringify(valueJson(write)).length;
    }
  }
  for (const intent of request.intents) {
    writes += capabilities.keysPerIntent;
    bytes += capabilities.payloadCopiesPerIntent * JSON.stringify(payloadJson(intent)).length;
  }
  // The stored outcome, the scope, the audit key, the fence grant (compared when the fence
  // presented is not the scope's current one, which the caller cannot know, so always counted),
  // each record and each intent.
  let compares = 4 + records.size + request.intents.length;
  if (request.release === true) {
    // The scope's row, and the job's ledger row it records (plan-leases.ts withRelease).
    writes += 1;
    if (request.job !== undefined) {
      writes += 1;
      compares += 1;
    }
  }
  bytes += (writes + compares) * KEY_OVERHEAD_BYTES;
  return { compares, writes, bytes };
}

/** Throws invalid_request, naming the limit, when the commit cannot fit in one transaction. */
export function requireCommitFits(
  request: CommitShape,
  capabilities: TransactionCapabilities,
): void {
  const { maxOps, maxBytes } = capabilities;
  if (maxOps === null && maxBytes === null) return;
  const footprint = commitFootprint(request, capabilities);
  const keys = Math.max(footprint.compares, footprint.writes);
  if (maxOps !== null && keys > maxOps) {
    fail(
      'invalid_request',
      `this commit needs ${keys} keys in one transaction (${footprint.writes} written, ` +
        `${footprint.compares} compared) and the store allows ${maxOps} (maxTransactionOps); ` +
        `split it into commits with fewer writes, deletes, reads or intents`,
      { limit: 'maxTransactionOps', max: maxOps, needed: keys },
    );
  }
  if (maxBytes !== null && footprint.bytes > maxBytes) {
    fail(
      'invalid_request',
      `this commit is about ${footprint.bytes} bytes in one transaction and the store accepts ` +
        `${maxBytes} (maxTransactionBytes); split it into commits with smaller values or payloads`,
      { limit: 'maxTransactionBytes', max: maxBytes, needed: footprint.bytes },
    );
  }
}
