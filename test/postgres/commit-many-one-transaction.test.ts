/**
 * A `commitMany` of up to 64 commits on distinct scopes is one transaction on PostgreSQL, one
 * `apply` statement committed once (one WAL flush), whether the store's group commit is idle (a
 * statement free, which a single write takes at once) or busy with commits of the same tenant
 * already waiting. Counted from the statements the store sends (pg's query, observed in this
 * process) and from the transactions that wrote the commits' audit entries (their xmin): both see
 * only this file's store, so the count holds however loaded the machine or the database is, where
 * the database's own commit counters would also count every other test file's transactions.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import {
  PostgresStore,
  type PostgresStoreOptions,
} from '../../src/store/postgres/postgres-store.js';
import type { CommitItemResult, CommitRequest, Grant } from '../../src/types.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { dropSchema, observingQueries, pgUrl, statementName, testSchema } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();
const schema = testSchema('commit_many');
let url: string;
let admin: pg.Pool;
const opened: Fencegate[] = [];

beforeAll(() => {
  if (noPostgres) return;
  url = pgUrl();
  admin = new pg.Pool({ connectionString: url, max: 1 });
  admin.on('error', () => undefined);
});

afterAll(async () => {
  if (noPostgres) return;
  for (const gate of opened) await gate.close();
  await admin.end();
  await dropSchema(url, schema);
});

async function open(groupCommit: PostgresStoreOptions['groupCommit']): Promise<Fencegate> {
  const gate = await Fencegate.open({
    store: await PostgresStore.open({ url, schema, groupCommit }),
  });
  opened.push(gate);
  return gate;
}

/**
 * Every statement `work` sends from this process, in order: a named statement by its name (the
 * schema left out), any other by its text. The real driver runs each one.
 */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  await observingQueries((config) => {
    if (typeof config === 'string') sent.push(config);
    else if (typeof config?.name === 'string') sent.push(statementName(config.name, schema));
    else sent.push(String(config?.text));
  }, work);
  return sent;
}

/**
 * How many transactions wrote the audit entries of these commits (distinct xmin); a reused
 * operationId's refusal, audited under the same id once the earlier item settled, is not one.
 */
async function transactionsOf(operationIds: string[]): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS n FROM ${schema}.audit
      WHERE kind = 'commit' AND operation_id = ANY($1)
        AND reason IS DISTINCT FROM 'operation_id_conflict'`,
    [operationIds],
  );
  return rows[0]?.n ?? 0;
}

/** `count` scopes granted through `gate`, which therefore knows their rows. */
async function grants(gate: Fencegate, tag: string, count: number): Promise<Grant[]> {
  const granted: Grant[] = [];
  for (let i = 0; i < count; i += 1) {
    granted.push(await gate.acquire({ scope: `${tag}-${i}`, holder: 'w', ttlMs: 600_000 }));
  }
  return granted;
}

/** One commit per grant, each writing its own scope's record `r`. */
function commitsOn(granted: Grant[], tag: string): CommitRequest[] {
  return granted.map((grant, i) => ({
    scope: grant.scope,
    fence: grant.fence,
    operationId: `${tag}-op-${i}`,
    writes: [{ name: 'r', expectRevision: 0, value: i }],
    intents: i % 8 === 0 ? [{ effectKey: `${tag}-fx-${i}`, target: 'hook', payload: i }] : [],
  }));
}

function outcomes(items: CommitItemResult[]): string[] {
  return items.map((item) =>
    item.ok ? `${item.result.outcome}${item.result.replayed ? ' replayed' : ''}` : item.error.code,
  );
}

describe.skipIf(noPostgres)('a commitMany on PostgreSQL', () => {
  // As `fencegate serve` opens the store (two statements at once on its pool of 16), and with
  // more statements free than the batch has commits.
  for (const [label, groupCommit] of [
    ['as the server opens it', true],
    ['with eight statements free', { maxBatches: 8 }],
  ] as const) {
    it(`of 64 commits on distinct scopes is one statement and one transaction on an idle store (${label})`, async () => {
      const tag = typeof groupCommit === 'object' ? 'idle8' : 'idle';
      const gate = await open(groupCommit);
      const requests = commitsOn(await grants(gate, tag, 64), tag);
      let items: CommitItemResult[] = [];
      const sent = await statementsOf(async () => {
        items = await gate.commitMany(requests);
      });
      expect(outcomes(items)).toEqual(requests.map(() => 'committed'));
      // The handle granted the scopes, so it plans on rows it knows: nothing is read first, and
      // the one statement is the batch's apply, in a transaction of its own (no BEGIN).
      expect(sent).toEqual(['apply']);
      expect(await transactionsOf(requests.map((r) => r.operationId))).toBe(1);
      for (const [i, request] of requests.entries()) {
        expect(await gate.getRecord(request.scope, 'r')).toMatchObject({ revision: 1, value: i });
      }
    });
  }

  it('sent together still answers each item as alone: replays, reused operationIds, refusals, invalid items', async () => {
    const gate = await open(true);
    const granted = await grants(gate, 'rules', 61);
    const [taken, ...distinct] = granted as [Grant, ...Grant[]];
    await gate.takeover(taken.scope, { holder: 'v', ttlMs: 600_000, reason: 'test' });
    const requests = commitsOn(distinct, 'rules');
    const before = requests.pop()!;
    expect((await gate.commit(before)).outcome).toBe('committed');
    const batch: CommitRequest[] = [
      ...requests,
      // The same commit as an earlier item: its retry.
      requests[0]!,
      // Another commit under an earlier item's operationId.
      { ...requests[1]!, writes: [{ name: 'other', expectRevision: 0, value: 1 }] },
      // A commit applied before the batch, sent again.
      before,
      // The fence the takeover replaced.
      { ...requests[2]!, scope: taken.scope, fence: taken.fence, operationId: 'rules-stale' },
      // A write without a name.
      {
        ...requests[3]!,
        operationId: 'rules-invalid',
        writes: [{ name: '', expectRevision: 0, value: 1 }],
      },
    ];
    expect(batch).toHaveLength(64);
    const items = await gate.commitMany(batch);
    expect(outcomes(items)).toEqual([
      ...requests.map(() => 'committed'),
      'committed replayed',
      'operation_id_conflict',
      'committed replayed',
      'rejected',
      'invalid_request',
    ]);
    const stale = items[batch.length - 2];
    expect(
      stale?.ok === true && stale.result.outcome === 'rejected' && stale.result.error.code,
    ).toBe('stale_fence');
    // The commits on distinct scopes, and the refusal beside them, went in one transaction.
    const ids = [...requests.map((r) => r.operationId), 'rules-stale'];
    expect(await transactionsOf(ids)).toBe(1);
    expect(await gate.getRecord(requests[1]!.scope, 'other')).toMatchObject({ exists: false });
  });

  it('of 64 commits waiting behind a commit of the same tenant goes as one transaction of its own', async () => {
    // One statement at a time: a commit sent first takes it, and what follows waits in the queue.
    const gate = await open({ maxBatches: 1 });
    const [blocker, earlier, ...granted] = await grants(gate, 'busy', 66);
    const requests = commitsOn(granted, 'busy');
    const single = (grant: Grant, operationId: string) =>
      gate.commit({
        scope: grant.scope,
        fence: grant.fence,
        operationId,
        writes: [{ name: 'r', expectRevision: 0, value: operationId }],
      });
    const [first, second, items] = await Promise.all([
      single(blocker!, 'busy-blocker'),
      single(earlier!, 'busy-earlier'),
      gate.commitMany(requests),
    ]);
    expect([first.outcome, second.outcome]).toEqual(['committed', 'committed']);
    expect(outcomes(items)).toEqual(requests.map(() => 'committed'));
    // The commit that waited before the batch goes in a batch of its own, not with part of it.
    const ids = requests.map((r) => r.operationId);
    expect(await transactionsOf(ids)).toBe(1);
    expect(await transactionsOf(['busy-earlier', ...ids])).toBe(2);
    expect(await transactionsOf(['busy-blocker', 'busy-earlier', ...ids])).toBe(3);
  });
});
