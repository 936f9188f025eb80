/**
 * core's plan rows (core/plan/transition.ts) as the Store's answers, for the stores that keep
 * rows in that shape (etcd as JSON, the in-memory reference store as objects).
 */
import { decodeCutoverCursor } from '../core/cutover-cursor.js';
import type { CutoverRow, CutoverStepRow, RecordRow, ScopeRow } from '../core/plan/transition.js';
import type {
  CutoverRecord,
  CutoverSummary,
  IntentStatus,
  ListCutoversQuery,
  Page,
  RecordState,
  ScopeState,
} from '../types.js';
import { cutoverPage } from './cutover-list.js';
import { toRecordState } from './rows.js';

/** The statuses of an intent still to be delivered: the ones the open-intent listings hold. */
export const OPEN_INTENT_STATUSES: ReadonlySet<IntentStatus> = new Set([
  'pending',
  'unknown',
  'claimed',
]);

export function scopeStateOf(scope: string, row: ScopeRow): ScopeState {
  return {
    scope,
    fence: row.fence,
    holder: row.holder,
    leaseExpiresAt: row.leaseExpiresAt,
    policyVersion: row.policyVersion,
    status: row.status,
    updatedAt: row.updatedAt,
  };
}

/** A record that never existed (no row) reads as `exists: false` at revision 0. */
export function recordStateOf(scope: string, name: string, row: RecordRow | null): RecordState {
  return toRecordState(
    scope,
    name,
    row === null ? undefined : { ...row, value: row.valueJson, updated_at: row.updatedAt },
  );
}

/** A cutover as read back: its planned scopes, the fences given so far and the scopes skipped. */
export function cutoverRecordOf(
  row: CutoverRow,
  steps: ReadonlyMap<string, CutoverStepRow>,
): CutoverRecord {
  return {
    cutoverId: row.cutoverId,
    toPolicy: row.toPolicy,
    holder: row.holder,
    status: row.status,
    startedAt: row.startedAt,
    completedAt: row.completedAt,
    startSeq: row.startSeq,
    fences: row.scopes.flatMap((scope) => {
      const step = steps.get(scope);
      return step === undefined || step.skipped === true ? [] : [{ scope, fence: step.fence }];
    }),
    planned: row.scopes.length,
    skipped: row.scopes.filter((scope) => steps.get(scope)?.skipped === true),
  };
}

/**
 * One page of cutovers newest first (startedAt, then cutoverId) after the query's cursor, from
 * every cutover of the tenant; `moved` counts a cutover's steps.
 */
export async function cutoverRowsPage(
  cutovers: readonly CutoverRow[],
  query: ListCutoversQuery,
  limit: number,
  moved: (cutoverId: string) => Promise<number>,
): Promise<Page<CutoverSummary>> {
  const after = decodeCutoverCursor(query.cursor);
  const newestFirst = (a: CutoverRow, b: CutoverRow): number =>
    b.startedAt - a.startedAt ||
    (a.cutoverId < b.cutoverId ? 1 : a.cutoverId > b.cutoverId ? -1 : 0);
  const page = cutovers
    .filter(
      (row) =>
        after === null ||
        row.startedAt < after.startedAt ||
        (row.startedAt === after.startedAt && row.cutoverId < after.cutoverId),
    )
    .sort(newestFirst)
    .slice(0, limit + 1);
  const rows = [];
  for (const row of page) {
    rows.push({
      cutover_id: row.cutoverId,
      to_policy: row.toPolicy,
      holder: row.holder,
      started_at: row.startedAt,
      completed_at: row.completedAt,
      planned: row.scopes.length,
      moved: await moved(row.cutoverId),
    });
  }
  return cutoverPage(rows, limit);
}
