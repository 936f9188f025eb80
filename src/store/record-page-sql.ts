/**
 * The statement of a record page, for both SQL adapters (each binds parameters its own way). Name
 * order is a range scan of the records' primary key (tenant, scope, name), revision order one of
 * records_by_revision (tenant, scope, revision, name); either range starts at the page's cursor,
 * so a page reads about its own rows however deep the cursor and however large the scope.
 *
 * The byte budget (core/answer-budget.ts) is decided inside the database: the page's rows are
 * first read without their values, with each value's length (which neither database needs the
 * value's text for), their running total is taken, and only the values the page keeps are sent.
 * The rows answered are those the page may keep and the first one past them, which tells that
 * another page follows; core/record-page.ts makes the same cut again on what arrives.
 */
import { listingStart, prefixEnd, type RecordPageQuery } from '../core/record-page.js';

/** Binds a value and returns its placeholder (`?` for SQLite, `$n` for PostgreSQL). */
export type BindParameter = (value: unknown) => string;

export interface RecordPageTable {
  /** The records table, schema-qualified where needed. */
  table: string;
  /** The columns to answer besides `value`, which the statement adds (null when not kept). */
  columns: readonly string[];
  /** A SQL integer type wide enough for a running total of bytes. */
  bigint: string;
}

/**
 * One statement answering the page's rows in order, each with its `bytes` (the value's length in
 * bytes, 0 for a tombstone) and its `value` only when the page may keep it.
 */
export function recordPageStatement(
  source: RecordPageTable,
  tenant: string,
  scope: string,
  query: RecordPageQuery,
  bind: BindParameter,
): string {
  const direction = query.descending ? 'DESC' : 'ASC';
  const orderBy =
    query.order === 'name' ? `name ${direction}` : `revision ${direction}, name ${direction}`;
  // Placeholders are bound in the order they appear in the text (SQLite's `?` are positional).
  const rows = `SELECT name, revision, COALESCE(octet_length(value), 0) AS bytes
    FROM ${source.table}
    WHERE tenant = ${bind(tenant)} AND scope = ${bind(scope)} AND ${pageRange(query, bind)}
    ORDER BY ${orderBy} LIMIT ${bind(query.limit + 1)}`;
  const counted = `SELECT name, bytes, row_number() OVER w AS n,
      CAST(sum(bytes) OVER w AS ${source.bigint}) AS through
    FROM page WINDOW w AS (ORDER BY ${orderBy} ROWS UNBOUNDED PRECEDING)`;
  const columns = source.columns.map((column) => `r.${column}`).join(', ');
  return `WITH page AS (${rows}), counted AS (${counted})
    SELECT ${columns}, c.bytes,
      CASE WHEN c.n <= ${bind(query.limit)} AND (c.n = 1 OR c.through <= ${bind(query.maxBytes)})
        THEN r.value END AS value
    FROM counted c JOIN ${source.table} r
      ON r.tenant = ${bind(tenant)} AND r.scope = ${bind(scope)} AND r.name = c.name
    WHERE c.n <= 2 OR c.through - c.bytes <= ${bind(query.maxBytes)}
    ORDER BY c.n`;
}

/**
 * The rows the page ranges over, written so that the index serving the page's order has the
 * position as its range bound, never as a filter over the rows before it: in name order the
 * bounds are the tighter of the prefix's and the position's (a database may take only one lower
 * bound of a column as the start of its range); in revision order the range of the revision
 * index starts at the position (or the listing's first record), and the prefix filters it.
 */
function pageRange(query: RecordPageQuery, bind: BindParameter): string {
  return query.order === 'name' ? nameRange(query, bind) : revisionRange(query, bind);
}

function nameRange(query: RecordPageQuery, bind: BindParameter): string {
  const start = query.prefix;
  const end = prefixEnd(query.prefix);
  const at = query.position?.name;
  if (at === undefined) return `name >= ${bind(start)} AND name < ${bind(end)}`;
  // Names are ASCII and every name is below U+FFFF, so comparing here agrees with the byte order
  // of SQLite's BINARY and PostgreSQL's "C" collation.
  if (query.descending) return `name >= ${bind(start)} AND name < ${bind(at < end ? at : end)}`;
  return at < start
    ? `name >= ${bind(start)} AND name < ${bind(end)}`
    : `name > ${bind(at)} AND name < ${bind(end)}`;
}

function revisionRange(query: RecordPageQuery, bind: BindParameter): string {
  const at = query.position ?? listingStart(query);
  const comparison = query.descending ? '<' : '>';
  const where = [`(revision, name) ${comparison} (${bind(at.revision)}, ${bind(at.name)})`];
  if (query.prefix !== '') {
    where.push(`name >= ${bind(query.prefix)}`, `name < ${bind(prefixEnd(query.prefix))}`);
  }
  return where.join(' AND ');
}
