/**
 * The cutover list of the SQL adapters: one row shape, one mapping, one way to cut a page and
 * hand out its cursor. Each adapter supplies only its query (newest first, after the cursor).
 */
import { encodeCutoverCursor } from '../core/cutover-cursor.js';
import type { CutoverSummary, Page } from '../types.js';

/** bigint columns arrive as strings from PostgreSQL, as numbers from SQLite. */
type Counter = string | number;

export interface CutoverSummaryRow {
  cutover_id: string;
  to_policy: string;
  holder: string;
  started_at: Counter;
  completed_at: Counter | null;
  planned: Counter;
  moved: Counter;
}

/** The columns both adapters select, over `cutovers c` and its `cutover_scopes`. */
export function cutoverSummaryColumns(scopesTable: string): string {
  const ofCutover = `s.tenant = c.tenant AND s.cutover_id = c.cutover_id`;
  return `c.cutover_id, c.to_policy, c.holder, c.started_at, c.completed_at,
    (SELECT count(*) FROM ${scopesTable} s WHERE ${ofCutover}) AS planned,
    (SELECT count(*) FROM ${scopesTable} s WHERE ${ofCutover} AND s.fence IS NOT NULL) AS moved`;
}

/** `rows` holds up to limit + 1 rows: one more than the page tells whether another page follows. */
export function cutoverPage(rows: CutoverSummaryRow[], limit: number): Page<CutoverSummary> {
  const items = rows.slice(0, limit).map((row): CutoverSummary => ({
    cutoverId: row.cutover_id,
    toPolicy: row.to_policy,
    holder: row.holder,
    scopes: Number(row.planned),
    moved: Number(row.moved),
    startedAt: Number(row.started_at),
    finishedAt: row.completed_at === null ? null : Number(row.completed_at),
  }));
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      rows.length > limit && last !== undefined
        ? encodeCutoverCursor({ startedAt: last.startedAt, cutoverId: last.cutoverId })
        : null,
  };
}
