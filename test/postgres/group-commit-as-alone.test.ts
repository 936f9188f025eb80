/**
 * Group commit decides every commit exactly as the same commits sent one at a time to a store
 * without it: every answer, stored outcome, record and audit entry (each scope's in order), checked
 * side by side on two schemas with the same history and clock. Commits of every kind meet in the
 * queue: new and updated records, a record's next life after a deletion, an old incarnation, a
 * deletion with an intent, a read of the scope's own record, replays, operationId conflicts, and
 * each refusal of a scope's state. Commits that waited together on distinct scopes go to the
 * database in one transaction; a commit that reads or writes a row another writes never shares
 * one (it must see the other's write), so such commits land in the order sent.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { CommitRequest, CommitResult } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const batched = testSchema('batched');
const alone = testSchema('alone');
const clock = new ManualClock();
let url: string;
let batchedGate: Fencegate;
let aloneGate: Fencegate;
let admin: pg.Pool;

beforeAll(async () => {
  url = pgUrl();
  // One batch in flight: whatever arrives while it runs waits for the next.
  batchedGate = await Fencegate.open({
    store: await PostgresStore.open({
      url,
      schema: batched,
      clock,
      groupCommit: { maxBatches: 1 },
      pool: { max: 4 },
    }),
  });
  aloneGate = await Fencegate.open({
    store: await PostgresStore.open({ url, schema: alone, clock, pool: { max: 2 } }),
  });
  admin = new pg.Pool({ connectionString: url, max: 2 });
  admin.on('error', () => undefined);
});

afterAll(async () => {
  await batchedGate.close();
  await aloneGate.close();
  await admin.end();
  await dropSchema(url, batched);
  await dropSchema(url, alone);
});

function settle(gate: Fencegate, request: CommitRequest): Promise<CommitResult | string> {
  return gate
    .commit(request)
    .catch((error: unknown) => (isFencegateError(error) ? error.code : String(error)));
}

/** The same history on a store: scopes in every state a commit can meet. */
async function history(gate: Fencegate): Promise<void> {
  await gate.acquire({ scope: 'a', holder: 'w', ttlMs: 600_000 });
  await gate.acquire({ scope: 'b', holder: 'w', ttlMs: 600_000 });
  await gate.acquire({ scope: 'c', holder: 'w', ttlMs: 600_000 });
  await gate.acquire({ scope: 'short', holder: 'w', ttlMs: 1_000 });
  const released = await gate.acquire({ scope: 'released', holder: 'w', ttlMs: 600_000 });
  await gate.release({ scope: 'released', holder: 'w', fence: released.fence });
  const write = (scope: string, operationId: string, name: string, expectRevision: number) =>
    gate.commit({
      scope,
      fence: 1,
      operationId,
      writes: [{ name, expectRevision, value: { from: operationId } }],
    });
  const remove = (operationId: string, name: string, expectRevision: number) =>
    gate.commit({
      scope: 'a',
      fence: 1,
      operationId,
      writes: [{ name, expectRevision, delete: true }],
    });
  await write('a', 'h-existing', 'existing', 0);
  await write('a', 'h-life-1', 'life', 0);
  await remove('h-life-2', 'life', 1);
  await write('a', 'h-life-3', 'life', 2);
  await write('a', 'h-done', 'done', 0);
  await write('a', 'h-gone-1', 'gone', 0);
  await remove('h-gone-2', 'gone', 1);
  await write('c', 'h-doomed', 'doomed', 0);
  clock.advance(5_000);
}

/** One commit of every kind, sent together; in each scope, in the order they must land. */
const BATCH: CommitRequest[] = [
  {
    scope: 'a',
    fence: 1,
    operationId: 'new',
    taskId: 'task-1',
    writes: [{ name: 'fresh', expectRevision: 0, value: { n: 1 } }],
  },
  {
    scope: 'a',
    fence: 1,
    operationId: 'update',
    writes: [
      { name: 'existing', expectRevision: 1, value: [1, 'two'] },
      { name: 'second', expectRevision: 0, value: 'text' },
    ],
  },
  {
    scope: 'a',
    fence: 1,
    operationId: 'after-deletion',
    writes: [{ name: 'gone', expectRevision: 2, value: 'back' }],
  },
  {
    scope: 'a',
    fence: 1,
    operationId: 'old-life',
    writes: [{ name: 'life', expectRevision: 1, value: 1 }],
  },
  {
    scope: 'a',
    fence: 1,
    operationId: 'h-done',
    writes: [{ name: 'done', expectRevision: 0, value: { from: 'h-done' } }],
  },
  {
    scope: 'a',
    fence: 1,
    operationId: 'h-existing',
    writes: [{ name: 'other', expectRevision: 0, value: null }],
  },
  {
    scope: 'b',
    fence: 1,
    operationId: 'stale-rev',
    writes: [{ name: 'x', expectRevision: 4, value: 1 }],
  },
  {
    scope: 'b',
    fence: 7,
    operationId: 'stale-fence',
    writes: [{ name: 'y', expectRevision: 0, value: 1 }],
  },
  {
    scope: 'b',
    fence: 1,
    operationId: 'b-ok',
    writes: [{ name: 'z', expectRevision: 0, value: 1 }],
  },
  {
    scope: 'c',
    fence: 1,
    operationId: 'delete-with-intent',
    writes: [{ name: 'doomed', expectRevision: 1, delete: true }],
    intents: [{ effectKey: 'fx-doomed', target: 'hook', payload: { gone: 'doomed' } }],
  },
  {
    scope: 'c',
    fence: 1,
    operationId: 'read-own',
    reads: [{ name: 'doomed', revision: 2 }],
    writes: [{ name: 'after', expectRevision: 0, value: 'seen the deletion' }],
  },
  {
    scope: 'missing',
    fence: 1,
    operationId: 'missing',
    writes: [{ name: 'm', expectRevision: 0, value: 1 }],
  },
  {
    scope: 'released',
    fence: 1,
    operationId: 'revoked',
    writes: [{ name: 'r', expectRevision: 0, value: 1 }],
  },
  {
    scope: 'short',
    fence: 1,
    operationId: 'expired',
    writes: [{ name: 's', expectRevision: 0, value: 1 }],
  },
];

/** What each answer was, for reading a failure. */
function summary(answer: CommitResult | string): string {
  if (typeof answer === 'string') return answer;
  if (answer.outcome === 'rejected') return answer.error.code;
  return answer.replayed ? 'replayed' : 'committed';
}

interface AuditRow {
  scope: string;
  reason: string | null;
}

/**
 * Each scope's audit entries in seq order, but for refusals of a reused operationId: such a
 * refusal reads only the operation's row, shares no row with the scope's other commits, so it
 * may be applied in any of their batches (its answer cannot depend on them). They are compared
 * apart, as a set.
 */
function auditOrder(rows: AuditRow[]) {
  const byScope = new Map<string, AuditRow[]>();
  const reusedIds: string[] = [];
  for (const row of rows) {
    if (row.reason === 'operation_id_conflict') {
      reusedIds.push(JSON.stringify(row));
      continue;
    }
    const entries = byScope.get(row.scope) ?? [];
    entries.push(row);
    byScope.set(row.scope, entries);
  }
  return {
    byScope: [...byScope].sort(([x], [y]) => (x < y ? -1 : 1)),
    reusedIds: reusedIds.sort(),
  };
}

async function stored(schema: string) {
  const audit = await admin.query<AuditRow>(
    `SELECT at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder, policy_version,
            fence, current_fence, lease_expires_at, records, effect_key, reads
     FROM ${schema}.audit ORDER BY seq`,
  );
  const operations = await admin.query(
    `SELECT tenant, operation_id, request_fingerprint, outcome, created_at
     FROM ${schema}.operations ORDER BY tenant, operation_id`,
  );
  const records = await admin.query(
    `SELECT tenant, scope, name, live, value, revision, incarnation, fingerprint, updated_at
     FROM ${schema}.records ORDER BY tenant, scope, name`,
  );
  const deletions = await admin.query(
    `SELECT tenant, scope, name, revision FROM ${schema}.record_deletions
     ORDER BY tenant, scope, name, revision`,
  );
  const intents = await admin.query(
    `SELECT tenant, effect_key, scope, target, payload, status, fence, operation_id, created_at
     FROM ${schema}.intents ORDER BY tenant, effect_key`,
  );
  return {
    audit: auditOrder(audit.rows),
    operations: operations.rows,
    records: records.rows,
    deletions: deletions.rows,
    intents: intents.rows,
  };
}

/**
 * The transaction (xmin) and scope of every commit audited after `afterSeq`, in seq order, but for
 * refusals of a reused operationId (they share no row with the scope's commits: see auditOrder).
 */
async function transactionsAfter(
  schema: string,
  afterSeq: number,
): Promise<{ scope: string; operationId: string; xmin: string }[]> {
  const { rows } = await admin.query<{ scope: string; operationId: string; xmin: string }>(
    `SELECT scope, operation_id AS "operationId", xmin::text AS xmin FROM ${schema}.audit
     WHERE seq > $1 AND kind = 'commit' AND reason IS DISTINCT FROM 'operation_id_conflict'
     ORDER BY seq`,
    [afterSeq],
  );
  return rows;
}

async function lastSeq(schema: string): Promise<number> {
  const { rows } = await admin.query<{ seq: string | null }>(
    `SELECT max(seq) AS seq FROM ${schema}.audit`,
  );
  return Number(rows[0]?.seq ?? 0);
}

it.skipIf(noPostgres)(
  'decides commits sent together exactly as the same commits one at a time',
  async () => {
    const start = clock.now();
    await history(batchedGate);
    clock.set(start);
    await history(aloneGate);
    const before = await lastSeq(batched);

    // The blocker takes the only batch slot: everything sent meanwhile waits in the queue.
    const blocker: CommitRequest = {
      scope: 'b',
      fence: 1,
      operationId: 'blocker',
      writes: [{ name: 'blocker', expectRevision: 0, value: 1 }],
    };
    const [, ...batchedAnswers] = await Promise.all(
      [blocker, ...BATCH].map((request) => settle(batchedGate, request)),
    );
    const aloneAnswers = [await settle(aloneGate, blocker)];
    for (const request of BATCH) aloneAnswers.push(await settle(aloneGate, request));

    // Sanity: the queue met every case it is meant to.
    expect(batchedAnswers.map(summary)).toEqual([
      'committed',
      'committed',
      'committed',
      'incarnation_changed',
      'replayed',
      'operation_id_conflict',
      'stale_revision',
      'stale_fence',
      'committed',
      'committed',
      'committed',
      'scope_not_found',
      'authority_revoked',
      'lease_expired',
    ]);
    expect(batchedAnswers).toEqual(aloneAnswers.slice(1));

    const [b, a] = [await stored(batched), await stored(alone)];
    expect(b.records).toEqual(a.records);
    expect(b.deletions).toEqual(a.deletions);
    expect(b.intents).toEqual(a.intents);
    expect(b.operations).toEqual(a.operations);
    // Each scope's audit log reads the same; scopes interleave by batch, not by send order.
    expect(b.audit).toEqual(a.audit);

    const entries = await transactionsAfter(batched, before);
    // Commits share a transaction only when none writes a row another reads or writes; that
    // they then decide as alone is what the comparisons above check.
    // The first commit of each scope but the blocker's waited in the queue together: one
    // transaction.
    const firsts = ['a', 'c', 'missing', 'released', 'short'].map(
      (scope) => entries.find((entry) => entry.scope === scope)?.xmin,
    );
    expect(new Set(firsts).size).toBe(1);
    expect(firsts[0]).toBeDefined();
  },
);
