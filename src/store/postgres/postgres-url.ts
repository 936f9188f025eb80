/**
 * Store URLs: `postgres://user:password@host:port/database?schema=NAME`. `schema` is fencegate's
 * (default `fencegate`); every other parameter is passed to the driver as is.
 */
import { fail } from '../../errors.js';
import { SCHEMA_PATTERN } from './postgres-migrations.js';

export const DEFAULT_SCHEMA = 'fencegate';

export interface ParsedPostgresUrl {
  /** The URL for the driver, without fencegate's own parameters. */
  connectionString: string;
  /** From `?schema=`, when present. */
  schema: string | undefined;
  /** host:port/database, safe for messages. */
  target: string;
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

export function parsePostgresUrl(url: string): ParsedPostgresUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail(
      'invalid_request',
      `the PostgreSQL store URL ${redactPostgresUrl(url)} is not a valid URL`,
    );
  }
  const schema = parsed.searchParams.get('schema') ?? undefined;
  parsed.searchParams.delete('schema');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
  const host = parsed.hostname === '' ? '(default host)' : parsed.hostname;
  return {
    connectionString: parsed.toString(),
    schema,
    target: `${host}:${parsed.port || '5432'}/${database}`,
  };
}

export function requireSchema(schema: string): string {
  if (!SCHEMA_PATTERN.test(schema)) {
    fail(
      'invalid_request',
      `schema must be a lowercase SQL identifier (a-z, 0-9, _), got ${JSON.stringify(schema)}`,
      {
        field: 'schema',
      },
    );
  }
  return schema;
}

/** The URL without its password (in the authority or as a `password` parameter). */
export function redactPostgresUrl(url: string): string {
  return (
    url
      // Greedy to the last '@': a password may itself hold an unescaped '@'.
      .replace(/\/\/([^:/@?#]*):.*@/, '//$1:***@')
      .replace(/([?&]password=)[^&#]*/i, '$1***')
  );
}
