/**
 * How a stored outcome is kept in the `operations` table. Every commit, refused or not, writes one
 * such row, and the smaller the row the fewer B-tree pages the insert dirties (a leaf held about
 * twelve rows of the outcome's full JSON and a hex fingerprint, so inserts often split one). The
 * request fingerprint is kept as its 32 bytes; the outcome as a JSON array without what the row
 * already says: its operationId (the key) and `replayed` (false for every stored outcome).
 * A refusal's error is kept as its code, message and details without their field names, which
 * were a sixth of the row every stale commit stores. This compact form is the only one.
 */
import type { CommitResult, CommittedIntent, CommittedRecord } from '../../types.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The column of a request fingerprint: a sha256 as its bytes, any other marker as text. */
export function fingerprintColumn(fingerprint: string): string | Buffer {
  return SHA256_HEX.test(fingerprint) ? Buffer.from(fingerprint, 'hex') : fingerprint;
}

export function fingerprintOf(column: string | Buffer): string {
  return typeof column === 'string' ? column : column.toString('hex');
}

const COMMITTED = 0;
const REJECTED = 1;

type CompactRecord = [string, number, number, string | null];
type CompactIntent = [string, CommittedIntent['status']];
type Rejection = Extract<CommitResult, { outcome: 'rejected' }>['error'];
type CompactOutcome =
  | [typeof COMMITTED, string, number, CompactRecord[], CompactIntent[]]
  | [typeof REJECTED, Rejection['code'], string, Rejection['details']];

/** The outcome as stored under its operationId: its own id and `replayed` are not kept. */
export function outcomeColumn(outcome: CommitResult): string {
  const compact: CompactOutcome =
    outcome.outcome === 'committed'
      ? [
          COMMITTED,
          outcome.scope,
          outcome.fence,
          outcome.records.map((r): CompactRecord => [
            r.name,
            r.revision,
            r.incarnation,
            r.fingerprint,
          ]),
          outcome.intents.map((i): CompactIntent => [i.effectKey, i.status]),
        ]
      : [REJECTED, outcome.error.code, outcome.error.message, outcome.error.details];
  return JSON.stringify(compact);
}

/** The outcome as it was answered, fields in the order the plan built them. */
export function outcomeOf(operationId: string, column: string): CommitResult {
  const parsed = JSON.parse(column) as CompactOutcome;
  if (parsed[0] === REJECTED) {
    const [, code, message, details] = parsed;
    return { outcome: 'rejected', operationId, replayed: false, error: { code, message, details } };
  }
  const [, scope, fence, records, intents] = parsed;
  return {
    outcome: 'committed',
    operationId,
    scope,
    fence,
    records: records.map(([name, revision, incarnation, fingerprint]): CommittedRecord => ({
      name,
      revision,
      incarnation,
      fingerprint,
    })),
    intents: intents.map(([effectKey, status]): CommittedIntent => ({ effectKey, status })),
    replayed: false,
  };
}
