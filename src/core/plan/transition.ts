/**
 * The shape every planned operation returns. An adapter loads a snapshot, asks a plan function
 * (plan-*.ts) for the transition, and applies it atomically:
 *
 * - `expect`: what the plan read and must still hold when it applies (an adapter with a write lock,
 *   SQLite, holds them trivially; etcd turns them into Txn compares);
 * - `put`: the rows to write (scope, records, tombstones, intents, the operation's outcome, …);
 * - `delete` (rarely): rollout documents to remove, which the transition read (the tenant's active
 *   rollouts once none is left: an acquire then reads a key with no row, which no store locks);
 * - `audit`: complete audit entries, appended in order;
 * - `answer`: what the caller gets: a value, or an audited refusal to throw once applied.
 *
 * Rows are keyed by refs inside one tenant: the adapter chooses the physical layout.
 */
import type { FencegateError } from '../../errors.js';
import type { CommitResult, Intent, JobRecord, Policy, ScopeState } from '../../types.js';
import type { NewAuditEntry } from '../audit-entry.js';
import type { FenceGrant } from '../fence-holder.js';
import type { RolloutDocument } from '../rollout-rows.js';

export type ScopeRow = Omit<ScopeState, 'scope'> & {
  /**
   * The worker token the current grant is bound to (core/grant-token.ts); null, or absent in rows
   * written before grants recorded one, for a grant that binds none.
   */
  grantTokenId?: string | null;
};

export interface RecordRow {
  exists: boolean;
  /** The value's JSON text; null for a tombstone. */
  valueJson: string | null;
  revision: number;
  incarnation: number;
  fingerprint: string | null;
  updatedAt: number;
}

/** A deletion of a record at a revision: tells a read of absence from an ended lifetime. */
export interface DeletionRow {
  /** When it happened; null where the store keeps only that it happened (SQLite). */
  at: number | null;
}

export interface OperationRow {
  requestFingerprint: string;
  outcome: CommitResult;
  at: number;
}

export interface CutoverRow {
  cutoverId: string;
  requestFingerprint: string;
  toPolicy: string;
  holder: string;
  leaseTtlMs: number | null;
  reason: string | null;
  status: 'running' | 'completed';
  startedAt: number;
  completedAt: number | null;
  startSeq: number;
  /**
   * Every scope the cutover covers, in name order. A cutover given its scopes has them all from
   * its start; one over a prefix, a rollout's step or its rollback lists them in pages
   * (plan-cutover-listing.ts), each adding names after the last: the list only grows at its end,
   * and is fixed once its listing ends, before its first chunk moves a scope.
   *
   * In a put, `scopes` are the names the put adds at the list's end: a new cutover's whole list, a
   * listing page's names, none for a change of status. A plan never reads the whole list to write
   * the cutover (a listing of n names would cost n² / page); a store that keeps the list in the
   * cutover's own value joins the two (`withAddedScopes`).
   */
  scopes: string[];
}

/**
 * The cutover's whole list. A store may load a cutover without it (PostgreSQL does: 100,000 names
 * are 2 MB on every load of the row, which most plans never read); it is then read as one page of
 * the list. Plans read a list a page at a time, after the last name their cursor keeps, and never
 * need this; only a cursor an older build stored, which points into the list by index, does.
 */
export function cutoverList(snapshot: Snapshot, cutover: CutoverRow): string[] {
  const loaded = cutover.scopes as string[] | undefined;
  return (
    loaded ??
    snapshot.list({
      type: 'page',
      of: { type: 'cutoverScopes', cutoverId: cutover.cutoverId },
      after: '',
      limit: Number.MAX_SAFE_INTEGER,
    })
  );
}

/** The cutover as stored after a put of `written` (whose `scopes` it adds to `stored`'s). */
export function withAddedScopes(stored: CutoverRow | null, written: CutoverRow): CutoverRow {
  if (stored === null || stored.scopes.length === 0) return written;
  return { ...written, scopes: [...stored.scopes, ...written.scopes] };
}

/**
 * A put as a store that keeps whole rows writes it, given the row stored under its ref: the same
 * put, but a cutover's with its whole list.
 */
export function wholeRowPut(put: Put, stored: unknown): Put {
  if (put.type !== 'cutover') return put;
  return { ...put, row: withAddedScopes(stored as CutoverRow | null, put.row) };
}

/**
 * A put of `cutover` with `change` and `added` at its list's end. The fields are copied one by
 * one: a store may read the list only when asked for it, and a spread would ask.
 */
export function cutoverUpdate(
  cutover: CutoverRow,
  change: Partial<Pick<CutoverRow, 'status' | 'completedAt'>>,
  added: string[],
): Put {
  const row: CutoverRow = {
    cutoverId: cutover.cutoverId,
    requestFingerprint: cutover.requestFingerprint,
    toPolicy: cutover.toPolicy,
    holder: cutover.holder,
    leaseTtlMs: cutover.leaseTtlMs,
    reason: cutover.reason,
    status: change.status ?? cutover.status,
    startedAt: cutover.startedAt,
    completedAt: change.completedAt !== undefined ? change.completedAt : cutover.completedAt,
    startSeq: cutover.startSeq,
    scopes: added,
  };
  return { type: 'cutover', cutoverId: cutover.cutoverId, row };
}

/**
 * The fence a cutover gave one scope: its presence marks the scope as done. A scope found deleted
 * is skipped: it keeps its fence, which the row records.
 */
export interface CutoverStepRow {
  fence: number;
  skipped?: boolean;
}

export interface Rows {
  scope: ScopeRow;
  /** Who a fence was granted to: written once, by the grant (fence-holder.ts), and kept. */
  fenceGrant: FenceGrant;
  record: RecordRow;
  deletion: DeletionRow;
  operation: OperationRow;
  intent: Intent;
  policy: Policy;
  cutover: CutoverRow;
  cutoverStep: CutoverStepRow;
  job: JobRecord;
  /** A rollout's state, the tenant's active rollouts, or what a rollout did to one scope. */
  rollout: RolloutDocument;
}

interface RefKeys {
  scope: { scope: string };
  fenceGrant: { scope: string; fence: number };
  record: { scope: string; name: string };
  deletion: { scope: string; name: string; revision: number };
  operation: { operationId: string };
  intent: { effectKey: string };
  policy: { version: string };
  cutover: { cutoverId: string };
  cutoverStep: { cutoverId: string; scope: string };
  job: { jobId: string };
  /** The document's key (core/rollout-rows.ts lays them out). */
  rollout: { key: string };
}

export type RowType = keyof Rows;
export type RefOf<K extends RowType> = { type: K } & RefKeys[K];
export type Ref = { [K in RowType]: RefOf<K> }[RowType];
export type PutOf<K extends RowType> = RefOf<K> & { row: Rows[K] };
export type Put = { [K in RowType]: PutOf<K> }[RowType];

/**
 * A set of rows read as a whole. Expecting a range means no row joined it since it was read; the
 * rows' own changes are expected through their refs.
 */
export type RangeRef =
  /** The records (and tombstones) of a scope, by name. */
  | { type: 'scopeRecords'; scope: string }
  /** The intents a scope's commits created, by effect key. */
  | { type: 'scopeIntents'; scope: string }
  /**
   * Intents that may still be claimed: pending, unknown or claimed. With `due`, a store may list
   * only the first `limit` of them claimable at `at` (by due time, then effect key, of `targets`
   * when given), and of those only as many as the claim's byte budget `maxBytes` can take and one
   * more: the plan filters and orders what it gets, so listing more is never wrong.
   */
  | {
      type: 'openIntents';
      due?: { at: number; limit: number; targets: string[] | null; maxBytes: number };
    }
  /** Scope names starting with `prefix`. */
  | { type: 'scopes'; prefix: string }
  /** Scopes a cutover has moved. */
  | { type: 'cutoverSteps'; cutoverId: string }
  /** Rollout document keys starting with `prefix` (a rollout's scopes, every rollout). */
  | { type: 'rolloutKeys'; prefix: string }
  /**
   * The first `limit` names of a range that come after `after` ('' for the first page): a
   * listing, or a long list, read in bounded pages (plan-cutover-listing.ts, plan-cutover.ts), or
   * a cancel's page of a scope's intents (cancel-intents-page.ts). A store reads the rows a page
   * names with it. A page is read, never expected: a plan that reads one must be right whatever
   * joins the page after it was read.
   */
  | { type: 'page'; of: PagedRange; after: string; limit: number };

/**
 * The ranges a page may be cut from: scope names or rollout document keys with a prefix (read
 * with their rows), a cutover's list (`CutoverRow.scopes`, read with each name's step row and
 * scope row), or a scope's intents by effect key (read with their rows).
 */
export type PagedRange =
  | { type: 'scopes'; prefix: string }
  | { type: 'rolloutKeys'; prefix: string }
  | { type: 'cutoverScopes'; cutoverId: string }
  | { type: 'scopeIntents'; scope: string };

export type Answer<A> = { ok: true; value: A } | { ok: false; error: FencegateError };

export interface Transition<A> {
  expect: (Ref | RangeRef)[];
  put: Put[];
  /** Rollout documents removed, each read (and expected) by the plan; none when absent. */
  delete?: RefOf<'rollout'>[];
  audit: NewAuditEntry[];
  answer: Answer<A>;
}

/** What a plan reads: one tenant's rows as of one moment, and the store time judged against it. */
export interface Snapshot {
  readonly tenant: string;
  readonly now: number;
  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null;
  /** The names in a range, in order: scope names, record names, effect keys. */
  list(range: RangeRef): string[];
}

export function isRangeRef(ref: Ref | RangeRef): ref is RangeRef {
  return (
    ref.type === 'scopeRecords' ||
    ref.type === 'scopeIntents' ||
    ref.type === 'openIntents' ||
    ref.type === 'scopes' ||
    ref.type === 'cutoverSteps' ||
    ref.type === 'rolloutKeys' ||
    ref.type === 'page'
  );
}

/** A string naming a row, for sets and maps of refs (cheaper than JSON.stringify). */
export function refKey(ref: Ref): string {
  switch (ref.type) {
    case 'scope':
      return `s\0${ref.scope}`;
    case 'fenceGrant':
      return `fg\0${ref.scope}\0${ref.fence}`;
    case 'record':
      return `r\0${ref.scope}\0${ref.name}`;
    case 'deletion':
      return `d\0${ref.scope}\0${ref.name}\0${ref.revision}`;
    case 'operation':
      return `o\0${ref.operationId}`;
    case 'intent':
      return `i\0${ref.effectKey}`;
    case 'policy':
      return `p\0${ref.version}`;
    case 'cutover':
      return `c\0${ref.cutoverId}`;
    case 'cutoverStep':
      return `cs\0${ref.cutoverId}\0${ref.scope}`;
    case 'job':
      return `j\0${ref.jobId}`;
    case 'rollout':
      return `ro\0${ref.key}`;
  }
}

/** A transition that changes nothing and answers from the snapshot (a replay, a reacquire). */
export function readOnly<A>(expect: (Ref | RangeRef)[], value: A): Transition<A> {
  return { expect, put: [], audit: [], answer: { ok: true, value } };
}

export function refused<A>(
  expect: (Ref | RangeRef)[],
  audit: NewAuditEntry[],
  error: FencegateError,
): Transition<A> {
  return { expect, put: [], audit, answer: { ok: false, error } };
}
