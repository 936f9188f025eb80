/**
 * SQLite store URLs: `sqlite:PATH`, `sqlite::memory:`, and `sqlite:PATH?synchronous=normal`, the
 * one option: durability on power loss traded for speed (see docs/semantics.md, "Durability").
 * The default is `full`.
 */
import { fail } from '../../errors.js';
import type { Synchronous } from './sqlite-database.js';

export interface ParsedSqliteUrl {
  path: string;
  /** From `?synchronous=`, when present. */
  synchronous: Synchronous | undefined;
}

const SYNCHRONOUS_VALUES: Record<string, Synchronous> = { full: 'FULL', normal: 'NORMAL' };

export function isSqliteUrl(url: string): boolean {
  return url.startsWith('sqlite:');
}

export function parseSqliteUrl(url: string): ParsedSqliteUrl {
  const rest = url.slice('sqlite:'.length);
  const mark = rest.indexOf('?');
  const path = mark === -1 ? rest : rest.slice(0, mark);
  if (path === '') {
    fail('invalid_request', 'a sqlite store URL needs a path: sqlite:PATH or sqlite::memory:');
  }
  let synchronous: Synchronous | undefined;
  for (const [name, value] of new URLSearchParams(mark === -1 ? '' : rest.slice(mark + 1))) {
    if (name !== 'synchronous') {
      fail(
        'invalid_request',
        `the sqlite store URL has an unknown option ${name}; the one option is ?synchronous=full|normal`,
        { option: name },
      );
    }
    synchronous = SYNCHRONOUS_VALUES[value.toLowerCase()];
    if (synchronous === undefined) {
      fail(
        'invalid_request',
        `the sqlite store URL's synchronous=${value} is not a mode; use full (the default) or normal`,
        { option: name },
      );
    }
  }
  return { path, synchronous };
}
