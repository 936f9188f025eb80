/**
 * The byte budget (core/answer-budget.ts) of a page of audit entries or intents, decided inside
 * the database for both SQL adapters: the page's candidate rows (at most its limit + 1) are
 * counted in order with a running total of their `bytes`, and only the rows the page may keep
 * and the first one past them are sent. Core then makes the exact cut on what arrives, so a
 * statement's `bytes` must never count more than core does (it may count less: then more rows
 * arrive than the page keeps, never fewer).
 */

export interface BudgetedRows {
  /** A SELECT of the page's candidate rows in page order, each with a `bytes` column. */
  rows: string;
  /** The columns of `rows` that order the page, as an ORDER BY list. */
  order: string;
  /** A SQL integer type wide enough for a running total of bytes. */
  bigint: string;
}

/** The rows of `source.rows` within the budget, and the first one past it, in page order. */
export function budgetedPageStatement(source: BudgetedRows, maxBytes: string): string {
  return `SELECT * FROM (
      SELECT page.*, row_number() OVER w AS page_row,
        CAST(sum(page.bytes) OVER w AS ${source.bigint}) AS page_through
      FROM (${source.rows}) AS page
      WINDOW w AS (ORDER BY ${source.order} ROWS UNBOUNDED PRECEDING)
    ) AS counted
    WHERE page_row <= 2 OR page_through - bytes <= ${maxBytes}
    ORDER BY ${source.order}`;
}
