/**
 * PostgreSQL for the tests: each fresh store is a schema of its own (migrated on open, about
 * 70 ms), named after the factory's label and dropped by its cleanup. A recycled schema is emptied
 * and handed out again, without migrating it a second time.
 */
import pg from 'pg';
import { cutoverFingerprint } from '../../../src/core/cutover-rules.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS } from '../../../src/store/postgres/postgres-pool-options.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import {
  dropSchema,
  pgUrl,
  testSchema,
  emptySchema,
  withClient,
} from '../../postgres/pg-helpers.js';
import { inject } from 'vitest';
import { skipStore } from '../store-filter.js';
import type { StoreFactory, StoreOptions, TestStoreKind } from '../stores.js';

/** What the PostgreSQL tests lack, or null when the global setup found or started a server. */
function postgresMissing(): string | null {
  return inject('pgUrl') === null
    ? (inject('pgProblem') ?? 'no PostgreSQL could be found or started')
    : null;
}

const POSTGRES_INSTALL =
  'apt-get install postgresql (the tests start a throwaway server from its binaries), ' +
  'or set FENCEGATE_TEST_PG_URL';

/**
 * For a file of PostgreSQL tests: true when FENCEGATE_STORES leaves it out, or this
 * machine has none and they must be skipped.
 */
export function skipWithoutPostgres(): boolean {
  return skipStore(POSTGRES);
}

function schemaOf(url: string): string {
  const schema = new URL(url).searchParams.get('schema');
  if (schema === null) throw new Error(`no ?schema= in ${url}`);
  return schema;
}

function postgresFactory(label: string): StoreFactory {
  const schemas: string[] = [];
  /** Migrated schemas nothing uses any more, emptied when handed out again. */
  const recycled: string[] = [];
  const withSchema = (schema: string) => {
    const url = new URL(pgUrl());
    url.searchParams.set('schema', schema);
    return url.toString();
  };
  const freshUrl = () => {
    const schema = testSchema(label);
    schemas.push(schema);
    return withSchema(schema);
  };
  const POOL = { max: 8 };
  /**
   * The pool the stores `open` hands out share (unless opened with warmConnections: false), made
   * at the first and ended by cleanup.
   */
  let warm: pg.Pool | null = null;
  const warmPool = () => {
    if (warm === null) {
      warm = new pg.Pool({
        connectionString: pgUrl(),
        ...POOL,
        application_name: 'fencegate',
        // As a store's own pool: a statement stuck behind a lock fails instead of hanging a file.
        statement_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
      });
      warm.on('error', () => undefined);
      warm.on('connect', (client) => client.on('error', () => undefined));
    }
    return warm;
  };
  const open = (url: string, { warmConnections, ...given }: StoreOptions, warmByDefault: boolean) =>
    PostgresStore.open({
      url,
      ...given,
      pool: POOL,
      lentPool: (warmConnections ?? warmByDefault) ? warmPool() : undefined,
    });
  return {
    name: 'postgres',
    freshUrl,
    open: async (options = {}) => {
      const reused = recycled.pop();
      if (reused !== undefined) await emptySchema(pgUrl(), reused);
      const url = reused === undefined ? freshUrl() : withSchema(reused);
      return { store: await open(url, options, true), url };
    },
    reopen: (url, options = {}) => open(url, options, false),
    recycle: (url) => {
      recycled.push(schemaOf(url));
      return Promise.resolve();
    },
    cleanup: async () => {
      await warm?.end();
      warm = null;
      for (const schema of schemas.splice(0)) await dropSchema(pgUrl(), schema);
    },
  };
}

/** Names the child's connections, so the test can wait until the server has let go of them. */
function childApplication(url: string): string {
  return `cutover-child-${schemaOf(url)}`;
}

export const POSTGRES: TestStoreKind = {
  name: 'postgres',
  family: 'postgres',
  everyArea: true,
  overHttp: true,
  modelRuns: 100,
  missing: postgresMissing,
  install: POSTGRES_INSTALL,
  factory: postgresFactory,
  behind: {
    planCutover: async (url, tenant, request, now) => {
      const schema = schemaOf(url);
      const { rows } = await withClient(url, (client) =>
        client.query<{ answer: Record<string, unknown> }>(
          `SELECT ${schema}.plan_cutover($1, $2, $3, $4, $5, NULL, NULL, NULL, $6, $7) AS answer`,
          [
            tenant,
            request.cutoverId,
            cutoverFingerprint(request),
            request.toPolicy,
            request.holder,
            request.prefix,
            now,
          ],
        ),
      );
      const answer = rows[0]?.answer;
      if (answer === undefined || Object.keys(answer).length > 0) {
        throw new Error(`plan_cutover answered ${JSON.stringify(answer)}`);
      }
    },
    watchCutover: async (url) => {
      const schema = schemaOf(url);
      // The store's URL without fencegate's own parameter is the driver's.
      const driverUrl = new URL(url);
      driverUrl.searchParams.delete('schema');
      const client = new pg.Client({ connectionString: driverUrl.toString() });
      client.on('error', () => undefined);
      await client.connect();
      const childUrl = new URL(url);
      childUrl.searchParams.set('application_name', childApplication(url));
      return {
        childUrl: childUrl.toString(),
        cutoverEntries: async () =>
          (
            await client.query<{ n: number }>(
              `SELECT count(*)::integer AS n FROM ${schema}.audit WHERE kind = 'cutover'`,
            )
          ).rows[0]!.n,
        // The server may still be running the chunk the child sent when it died: it either
        // commits whole or rolls back, and only then does the backend go away.
        childGone: async () => {
          for (;;) {
            const { rows } = await client.query<{ n: number }>(
              'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE application_name = $1',
              [childApplication(url)],
            );
            if (rows[0]!.n === 0) return;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        },
        close: () => client.end(),
      };
    },
  },
};
