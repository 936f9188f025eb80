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

/**
 * What an intent's row spends of a page's budget inside the database, for both SQL adapters: its
 * columns of a size the caller chose, as stored. Each is at most its JSON text in the intent core
 * counts (core/intent-page.ts): the payload is stored as that text, a string's JSON adds quotes
 * and escapes, and the fields of fixed size are left out, so the sum never counts more than core.
 */
export const INTENT_ROW_BYTES = `octet_length(payload) + octet_length(effect_key)
  + octet_length(scope) + octet_length(operation_id) + octet_length(target)
  + COALESCE(octet_length(claimed_by), 0) + COALESCE(octet_length(provider_ref), 0)
  + COALESCE(octet_length(last_error), 0)`;
