/**
 * The WHERE and ORDER BY of a record page, for both SQL adapters (each binds parameters its own
 * way). Name order is a range scan of the records' primary key (tenant, scope, name); revision
 * order sorts the scope's matching rows inside the database, without an index of its own, so
 * commits pay nothing for it.
 */
import { prefixEnd, type RecordPageQuery } from '../core/record-page.js';

/** Binds a value and returns its placeholder (`?` for SQLite, `$n` for PostgreSQL). */
export type BindParameter = (value: unknown) => string;

export function recordPageClauses(
  query: RecordPageQuery,
  bind: BindParameter,
): { where: string; orderBy: string; limit: string } {
  const direction = query.descending ? 'DESC' : 'ASC';
  const where = [`name >= ${bind(query.prefix)}`, `name < ${bind(prefixEnd(query.prefix))}`];
  const position = query.position;
  if (query.order === 'name') {
    if (position !== null)
      where.push(`name ${query.descending ? '<' : '>'} ${bind(position.name)}`);
    return {
      where: where.join(' AND '),
      orderBy: `name ${direction}`,
      limit: bind(query.limit + 1),
    };
  }
  if (position !== null) {
    const comparison = query.descending ? '<' : '>';
    where.push(
      `(revision, name) ${comparison} (${bind(position.revision)}, ${bind(position.name)})`,
    );
  }
  return {
    where: where.join(' AND '),
    orderBy: `revision ${direction}, name ${direction}`,
    limit: bind(query.limit + 1),
  };
}
