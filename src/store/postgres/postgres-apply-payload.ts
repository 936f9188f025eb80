/**
 * What the apply step (postgres-sql-apply.ts) receives for a set of planned transitions: for each,
 * every key it read, expects or writes with the row_version it planned on; the ranges it listed
 * with their hash; its puts as columns, each with the row_version it replaces (0: a new row); its
 * audit entries. And the advisory locks of ranges: exclusive for a range a plan listed, shared for
 * one a put may join (a new record or intent, a new scope, any intent's change of status, a
 * cutover's step).
 */
import type { NewAuditEntry } from '../../core/audit-entry.js';
import {
  isRangeRef,
  refKey,
  type Put,
  type RangeRef,
  type Ref,
  type Transition,
} from '../../core/plan/transition.js';
import { keyColumns, putColumns } from './postgres-plan-rows.js';
import { rangeKey, type PostgresSnapshot } from './postgres-snapshot.js';

export interface PlannedOn<A> {
  snapshot: PostgresSnapshot;
  transition: Transition<A>;
}

export interface ApplyPayload {
  /** The JSON document the apply step reads. */
  body: {
    n: number;
    /** Keys planned with a row (version > 0), to lock and compare. */
    lock: Record<string, Record<string, unknown>[]>;
    /** Keys planned absent, to check still absent. */
    absent: Record<string, Record<string, unknown>[]>;
    advisory?: { key: string; shared: boolean }[];
    ranges?: { t: number; range: RangeRef; hash: string }[];
    put: Record<string, Record<string, unknown>[]>;
    audit?: Record<string, unknown>[];
  };
  /** Per transition, the refs it locked: the keys to refresh when it did not hold. */
  locked: Map<string, Ref>[];
}

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
    default:
      return [];
  }
}

function auditColumns(entry: NewAuditEntry, t: number, i: number): Record<string, unknown> {
  return {
    t,
    i,
    at: entry.at,
    scope: entry.scope,
    kind: entry.kind,
    outcome: entry.outcome,
    reason: entry.reason,
    task_id: entry.taskId,
    operation_id: entry.operationId,
    holder: entry.holder,
    policy_version: entry.policyVersion,
    fence: entry.fence,
    current_fence: entry.currentFence,
    lease_expires_at: entry.leaseExpiresAt,
    records: entry.records,
    effect_key: entry.effectKey,
    reads: entry.reads,
  };
}

export function applyPayload(plans: readonly PlannedOn<unknown>[]): ApplyPayload {
  const lock: ApplyPayload['body']['lock'] = {};
  const absent: ApplyPayload['body']['absent'] = {};
  const put: ApplyPayload['body']['put'] = {};
  const advisory: { key: string; shared: boolean }[] = [];
  const ranges: { t: number; range: RangeRef; hash: string }[] = [];
  const audit: Record<string, unknown>[] = [];
  const locked: Map<string, Ref>[] = [];
  plans.forEach(({ snapshot, transition }, t) => {
    const refs = new Map<string, Ref>();
    for (const [key, { ref }] of snapshot.read) refs.set(key, ref);
    for (const ref of transition.expect) {
      if (isRangeRef(ref)) {
        const loaded = snapshot.call.ranges.get(rangeKey(ref));
        if (loaded === undefined) throw new Error('a transition expects a range it did not load');
        ranges.push({ t, range: ref, hash: loaded.hash });
        advisory.push({ key: rangeFamily(ref), shared: false });
      } else {
        refs.set(refKey(ref), ref);
      }
    }
    for (const write of transition.put) {
      const { row: _row, ...ref } = write;
      const key = refKey(ref);
      refs.set(key, ref);
      const existed = snapshot.state(ref).version !== 0;
      for (const range of joinedRanges(write, existed)) {
        advisory.push({ key: rangeFamily(range), shared: true });
      }
      (put[write.type] ??= []).push({
        t,
        v: snapshot.state(ref).version,
        ...putColumns(write),
      });
    }
    // A record (or its deletion) read as absent and not written takes no lock of its own: its
    // scope's row is locked instead, which every writer of the record locks.
    const written = new Set(transition.put.map(({ row: _row, ...ref }) => refKey(ref)));
    for (const [key, ref] of [...refs]) {
      if ((ref.type === 'record' || ref.type === 'deletion') && !written.has(key)) {
        if (snapshot.state(ref).version === 0) {
          const scope: Ref = { type: 'scope', scope: ref.scope };
          refs.set(refKey(scope), scope);
        }
      }
    }
    for (const [, ref] of refs) {
      const { version } = snapshot.state(ref);
      ((version === 0 ? absent : lock)[ref.type] ??= []).push({
        t,
        ...keyColumns(ref),
        v: version,
      });
    }
    locked.push(refs);
    transition.audit.forEach((entry) => audit.push(auditColumns(entry, t, audit.length)));
  });
  const body: ApplyPayload['body'] = { n: plans.length, lock, absent, put };
  if (advisory.length > 0) body.advisory = advisory;
  if (ranges.length > 0) body.ranges = ranges;
  if (audit.length > 0) body.audit = audit;
  return { body, locked };
}
