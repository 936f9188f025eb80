/**
 * The pool and the one way statements are run: take a connection, send one statement, map any
 * failure to the catalog (see postgres-errors.ts). Serialization failures and deadlocks are
 * retried here and never reach the caller; a statement pg refused to send on a broken pooled
 * connection is sent again on a fresh one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { FencegateError, fail } from '../../errors.js';
import {
  classify,
  internalError,
  isUniqueViolation,
  outcomeUnknown,
  storeUnavailable,
} from './postgres-errors.js';
import { DEFAULT_POOL, type PostgresPoolOptions } from './postgres-pool-options.js';

/**
 * How a failure in flight is answered: mutations are in doubt, reads changed nothing. A statement
 * with `insertRaces` inserts rows another transaction may insert at the same moment; its
 * unique_violation is sent again, like a serialization failure (the apply step then finds the
 * other transaction's row in its compares).
 */
export type StatementKind =
  { mutation: false } | { mutation: true; operationId?: string; insertRaces?: boolean };

/** Sends one statement on a connection a piece of work holds. */
export type Send = <R extends QueryResultRow>(
  kind: StatementKind,
  config: QueryConfig,
) => Promise<QueryResult<R>>;

/** A failure of a statement pg never sent: the work may run again on another connection. */
class NotSent extends Error {
  constructor(readonly failure: unknown) {
    super('a statement was never sent');
  }
}

/**
 * Whether a session's statement failed unsent: work that catches its statements' failures must let
 * this one through, so the session runs the whole work again on another connection.
 */
export function isNotSent(error: unknown): boolean {
  return error instanceof NotSent;
}

const MAX_RETRIES = 64;
const MAX_RESENDS = 2;

/**
 * What a failed statement means: send it again ('retry': the server rolled it back because of a
 * concurrent transaction; 'not_sent': pg never sent it), or the error to answer. `committed` is
 * false when the failure cannot have committed anything (a transaction before its COMMIT).
 * `usable` says whether the connection may go back to the pool (the server answered).
 */
function verdictOf(
  target: string,
  kind: StatementKind,
  failure: unknown,
  committed = true,
): { verdict: 'retry' | 'not_sent' | FencegateError; usable: boolean } {
  const errorClass =
    kind.mutation && kind.insertRaces === true && isUniqueViolation(failure)
      ? 'retry'
      : classify(failure);
  const usable =
    errorClass === 'retry' || errorClass === 'internal' || errorClass === 'unavailable';
  switch (errorClass) {
    case 'retry':
    case 'not_sent':
      return { verdict: errorClass, usable };
    case 'unavailable':
      return { verdict: storeUnavailable(target, failure), usable };
    case 'internal':
      return { verdict: internalError(target, failure), usable };
    case 'in_doubt':
      return {
        verdict:
          kind.mutation && committed
            ? outcomeUnknown(target, failure, kind.operationId)
            : storeUnavailable(target, failure),
        usable,
      };
  }
}

/** Waits before sending a statement again; store_unavailable once it has been sent too often. */
async function backOff(target: string, retries: number, failure: unknown): Promise<void> {
  if (retries > MAX_RETRIES) throw storeUnavailable(target, failure);
  await sleep(Math.random() * Math.min(50, 2 ** retries));
}

export class PostgresConnection {
  readonly pool: pg.Pool;
  readonly target: string;
  #closed = false;
  /** False for a pool lent by the caller (tests), which outlives the store. */
  readonly #ownsPool: boolean;

  constructor(
    connectionString: string,
    target: string,
    options: PostgresPoolOptions = {},
    lent?: unknown,
  ) {
    this.target = target;
    this.#ownsPool = lent === undefined;
    if (lent !== undefined) {
      if (!(lent instanceof pg.Pool)) {
        fail(
          'invalid_request',
          'lentPool must be a pg.Pool; leave it out to give the store its own pool',
        );
      }
      this.pool = lent;
      return;
    }
    this.pool = new pg.Pool({
      connectionString,
      max: options.max ?? DEFAULT_POOL.max,
      idleTimeoutMillis: options.idleTimeoutMillis ?? DEFAULT_POOL.idleTimeoutMillis,
      connectionTimeoutMillis:
        options.connectionTimeoutMillis ?? DEFAULT_POOL.connectionTimeoutMillis,
      application_name: options.applicationName ?? DEFAULT_POOL.applicationName,
      statement_timeout: options.statementTimeoutMillis ?? DEFAULT_POOL.statementTimeoutMillis,
    });
    // A pooled connection that breaks while idle is dropped by the pool; without these listeners
    // its 'error' event would crash the process.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (client) => {
      client.on('error', () => undefined);
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  async #connect(): Promise<PoolClient> {
    if (this.#closed) throw storeUnavailable(this.target, new Error('the store is closed'));
    try {
      return await this.pool.connect();
    } catch (error) {
      throw storeUnavailable(this.target, error);
    }
  }

  /** Runs work on one pooled connection (migrations); any failure is store_unavailable. */
  async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (error) {
      client.release(true);
      // A refusal the work decided (a schema this version does not open) keeps its own message.
      if (error instanceof FencegateError) throw error;
      if (classify(error) === 'internal') throw internalError(this.target, error);
      throw storeUnavailable(this.target, error);
    }
  }

  async query<R extends QueryResultRow>(
    kind: StatementKind,
    config: QueryConfig,
  ): Promise<QueryResult<R>> {
    let retries = 0;
    let resends = 0;
    for (;;) {
      const client = await this.#connect();
      let failure: unknown;
      try {
        const result = await client.query<R>(config);
        client.release();
        return result;
      } catch (error) {
        failure = error;
      }
      const { verdict, usable } = verdictOf(this.target, kind, failure);
      // A server error leaves the connection usable; anything else may have broken it.
      client.release(usable ? undefined : true);
      if (verdict === 'retry') retries = await this.#retry(retries, failure);
      else if (verdict === 'not_sent') resends = this.#resend(resends, failure);
      else throw verdict;
    }
  }

  /**
   * Runs `work` on one pooled connection, held for its whole length: each statement it sends is
   * answered as `query` answers it (a race the server rolled back is sent again on the same
   * connection). So a caller that takes the time and plans once it holds a connection does not
   * plan behind a queue for the pool. A statement pg never sent runs the whole work again on
   * another connection: `work` must send at most one statement that changes anything, and last.
   */
  async session<T>(work: (send: Send) => Promise<T>): Promise<T> {
    for (let resends = 0; ; resends++) {
      const client = await this.#connect();
      let broken = false;
      const send: Send = async <R extends QueryResultRow>(
        kind: StatementKind,
        config: QueryConfig,
      ) => {
        for (let retries = 0; ;) {
          try {
            return await client.query<R>(config);
          } catch (failure) {
            const { verdict, usable } = verdictOf(this.target, kind, failure);
            if (verdict === 'retry') {
              await backOff(this.target, ++retries, failure);
              continue;
            }
            broken = !usable;
            throw verdict === 'not_sent' ? new NotSent(failure) : verdict;
          }
        }
      };
      try {
        return await work(send);
      } catch (error) {
        if (!(error instanceof NotSent)) throw error;
        if (resends >= MAX_RESENDS) throw storeUnavailable(this.target, error.failure);
      } finally {
        client.release(broken ? true : undefined);
      }
    }
  }

  /**
   * Runs `work` in one transaction on one connection, its statements sent through the function it
   * is given; commits what it returns. Failures are answered as `query` answers them, with one
   * difference: a connection lost before COMMIT was sent changed nothing (PostgreSQL rolls the
   * transaction back), so only a failure of COMMIT itself is in doubt. A serialization failure,
   * deadlock or duplicate key runs the whole work again. An error the work throws is rethrown
   * after a rollback.
   */
  async transaction<T>(
    kind: StatementKind,
    work: (
      query: <R extends QueryResultRow>(config: QueryConfig) => Promise<QueryResult<R>>,
    ) => Promise<T>,
  ): Promise<T> {
    let retries = 0;
    let resends = 0;
    for (;;) {
      const client = await this.#connect();
      let committing = false;
      let failure: unknown;
      try {
        await client.query('BEGIN');
        const result = await work((config) => client.query(config));
        committing = true;
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        failure = error;
      }
      if (failure instanceof FencegateError) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
        throw failure;
      }
      const { verdict, usable } = verdictOf(
        this.target,
        { ...kind, insertRaces: true } as StatementKind,
        failure,
        committing,
      );
      if (usable) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release();
      } else {
        client.release(true);
      }
      if (verdict === 'retry') retries = await this.#retry(retries, failure);
      else if (verdict === 'not_sent') resends = this.#resend(resends, failure);
      else throw verdict;
    }
  }

  /** Waits before a statement the server rolled back goes again; the retries so far. */
  async #retry(retries: number, failure: unknown): Promise<number> {
    await backOff(this.target, retries + 1, failure);
    return retries + 1;
  }

  /** A statement pg never sent goes again on another connection, a few times at most. */
  #resend(resends: number, failure: unknown): number {
    if (resends + 1 > MAX_RESENDS) throw storeUnavailable(this.target, failure);
    return resends + 1;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) await this.pool.end();
  }
}
