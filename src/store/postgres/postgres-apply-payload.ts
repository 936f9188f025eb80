/**
 * What the apply step (postgres-sql-apply.ts) receives for a set of planned transitions: for each,
 * every key it read, expects or writes with the row_version it planned on; the ranges it listed
 * with their hash; its puts as columns, each with the row_version it replaces (0: a new row); its
 * audit entries. And the advisory locks of ranges: exclusive for a range a plan listed, shared for
 * one a put may join (a new record or intent, a new scope, any intent's change of status, a
 * cutover's step).
 *
 * One key read as absent is locked too: the tenant's active rollouts. An acquire of a scope not
 * pinned yet decides its policy on them; while no rollout is active the document is absent, and a
 * key read as absent takes no row lock, so a rollout's start (which writes it) could commit
 * between the acquire's check and its commit, and the scope be pinned by the acquirer's policy
 * under a rollout already started. So a plan that reads the document as absent takes an advisory
 * lock on it shared, and one that writes it takes it exclusive: the acquire then waits for the
 * start, and its check finds the document.
 */
import type { NewAuditEntry } from '../../core/audit-entry.js';
import { ACTIVE_ROLLOUTS_REF } from '../../core/rollout-rows.js';
import { isRangeRef, refKey, type Put, type RangeRef } from '../../core/plan/transition.js';
import { keyColumns, putColumns } from './postgres-plan-rows.js';
import type { Planned } from '../optimistic/optimistic-engine.js';
import { rangeKey, type KeyState, type LoadedRange } from './postgres-snapshot.js';

export type PlannedOn<A> = Planned<A, KeyState, LoadedRange>;

export interface ApplyPayload {
  /** The JSON document the apply step reads. */
  body: {
    n: number;
    /** Keys planned with a row (version > 0), to lock and compare. */
    lock: Rows;
    /** Keys planned absent, to check still absent. */
    absent: Rows;
    advisory?: { key: string; shared: boolean }[];
    ranges?: { t: number; range: RangeRef; hash: string }[];
    /** Puts of rows planned absent (row_version 0), to insert… */
    insert: Rows;
    /** …and of rows planned existing, to update by key. */
    update: Rows;
    /** Rollout documents removed, by key (each also locked, as read). */
    delete?: Rows;
    audit?: Record<string, unknown>[];
  };
  /** Per transition, the keys it locked or compared: those to refresh when it did not hold. */
  locked: ReadonlyMap<string, unknown>[];
}

/** Rows of the payload by row type. */
type Rows = Record<string, Record<string, unknown>[]>;

/** The advisory lock name of the tenant's active rollouts, read as absent or written. */
const ACTIVE_FAMILY = 'A';
const ACTIVE_KEY = refKey(ACTIVE_ROLLOUTS_REF);

/** The advisory lock name of the range a listing reads or a put joins. */
function rangeFamily(range: RangeRef): string {
  switch (range.type) {
    case 'scopeRecords':
      return `R${JSON.stringify(range.scope)}`;
    case 'scopeIntents':
      return `I${JSON.stringify(range.scope)}`;
    case 'openIntents':
      return 'O';
    case 'scopes':
      return 'S';
    case 'cutoverSteps':
      return `C${JSON.stringify(range.cutoverId)}`;
    // One family for every rollout document: a listing by any prefix locks it whole.
    case 'rolloutKeys':
      return 'RO';
    case 'page':
      throw new Error('a page of a range is read, never expected');
  }
}

/** The ranges a put may add a name to, given whether its row existed. */
function joinedRanges(put: Put, existed: boolean): RangeRef[] {
  switch (put.type) {
    case 'record':
      return existed ? [] : [{ type: 'scopeRecords', scope: put.scope }];
    case 'intent':
      return existed
        ? [{ type: 'openIntents' }]
        : [{ type: 'openIntents' }, { type: 'scopeIntents', scope: put.row.scope }];
    case 'scope':
      return existed ? [] : [{ type: 'scopes', prefix: '' }];
    case 'cutoverStep':
      return [{ type: 'cutoverSteps', cutoverId: put.cutoverId }];
    case 'rollout':
      return existed ? [] : [{ type: 'rolloutKeys', prefix: '' }];
    default:
      return [];
  }
}

function auditColumns(entry: NewAuditEntry, t: number, i: number): Record<string, unknown> {
  // Absent fields are left out (the apply step reads them as NULL): a shorter document to write
  // and to parse.
  return {
    t,
    i,
    at: entry.at,
    scope: entry.scope,
    kind: entry.kind,
    outcome: entry.outcome,
    reason: entry.reason ?? undefined,
    task_id: entry.taskId ?? undefined,
    operation_id: entry.operationId ?? undefined,
    holder: entry.holder ?? undefined,
    policy_version: entry.policyVersion ?? undefined,
    fence: entry.fence ?? undefined,
    current_fence: entry.currentFence ?? undefined,
    lease_expires_at: entry.leaseExpiresAt ?? undefined,
    records: entry.records ?? undefined,
    effect_key: entry.effectKey ?? undefined,
    reads: entry.reads ?? undefined,
    token_id: entry.tokenId,
  };
}

/**
 * Every key a planned transition touches, in its snapshot's `read` map with the state it planned
 * on: the rows it read, the keys it expects and writes, and, for a record (or deletion) it read as
 * absent and does not write, that record's scope, whose row lock stands in for the record's (every
 * writer of the record locks its scope).
 */
export function touchedKeys({
  snapshot,
  transition,
}: PlannedOn<unknown>): PlannedOn<unknown>['snapshot']['read'] {
  for (const ref of transition.expect) if (!isRangeRef(ref)) snapshot.state(ref);
  const written = new Set<string>();
  for (const write of transition.put) {
    written.add(refKey(write));
    snapshot.state(write);
  }
  for (const ref of transition.delete ?? []) snapshot.state(ref);
  for (const [key, { ref, state }] of snapshot.read) {
    if ((ref.type === 'record' || ref.type === 'deletion') && state.version === 0) {
      if (!written.has(key)) snapshot.state({ type: 'scope', scope: ref.scope });
    }
  }
  return snapshot.read;
}

export function applyPayload(plans: readonly PlannedOn<unknown>[]): ApplyPayload {
  const lock: Rows = {};
  const absent: Rows = {};
  const insert: Rows = {};
  const update: Rows = {};
  const removed: Rows = {};
  const advisory: { key: string; shared: boolean }[] = [];
  const ranges: { t: number; range: RangeRef; hash: string }[] = [];
  const audit: Record<string, unknown>[] = [];
  const locked: ReadonlyMap<string, unknown>[] = [];
  plans.forEach((plan, t) => {
    const { snapshot, transition } = plan;
    for (const ref of transition.expect) {
      if (!isRangeRef(ref)) continue;
      const loaded = snapshot.call.ranges.get(rangeKey(ref));
      if (loaded === undefined) throw new Error('a transition expects a range it did not load');
      ranges.push({ t, range: ref, hash: loaded.hash });
      advisory.push({ key: rangeFamily(ref), shared: false });
    }
    const touched = touchedKeys(plan);
    const active = touched.get(refKey(ACTIVE_ROLLOUTS_REF));
    const removes = transition.delete ?? [];
    if ([...transition.put, ...removes].some((ref) => refKey(ref) === ACTIVE_KEY)) {
      advisory.push({ key: ACTIVE_FAMILY, shared: false });
    } else if (active !== undefined && active.state.version === 0) {
      advisory.push({ key: ACTIVE_FAMILY, shared: true });
    }
    for (const write of transition.put) {
      const { version } = snapshot.state(write);
      for (const range of joinedRanges(write, version !== 0)) {
        advisory.push({ key: rangeFamily(range), shared: true });
      }
      const columns = putColumns(write);
      columns.t = t;
      columns.v = version;
      ((version === 0 ? insert : update)[write.type] ??= []).push(columns);
      if (write.type === 'cutover' && version !== 0) {
        // The update writes the cutover's own columns; the names the put adds at its list's end
        // are inserted as rows without a step, as a new cutover's are.
        delete columns.scopes;
        for (const scope of write.row.scopes) {
          (insert.cutoverStep ??= []).push({
            cutover_id: write.cutoverId,
            scope,
            fence: null,
            skipped: false,
            t,
            v: 0,
          });
        }
      }
    }
    for (const ref of transition.delete ?? []) {
      (removed[ref.type] ??= []).push({ ...keyColumns(ref), t, v: snapshot.state(ref).version });
    }
    for (const { ref, state } of touched.values()) {
      const columns = keyColumns(ref);
      columns.t = t;
      columns.v = state.version;
      ((state.version === 0 ? absent : lock)[ref.type] ??= []).push(columns);
    }
    locked.push(touched);
    transition.audit.forEach((entry) => audit.push(auditColumns(entry, t, audit.length)));
  });
  const body: ApplyPayload['body'] = { n: plans.length, lock, absent, insert, update };
  if (advisory.length > 0) body.advisory = advisory;
  if (ranges.length > 0) body.ranges = ranges;
  if (Object.keys(removed).length > 0) body.delete = removed;
  if (audit.length > 0) body.audit = audit;
  return { body, locked };
}
