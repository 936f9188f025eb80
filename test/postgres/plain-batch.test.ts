/**
 * A group-commit batch of plain commits (no reads, intents or deletions; each operationId and
 * record once) is decided in one pass by `commit_plain_batch`. Every answer, stored outcome, audit
 * entry (in order) and record must be what the same commits give run one at a time on a store
 * without group commit: checked side by side on two schemas with the same history and clock.
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

const batched = testSchema('plain_batch');
const alone = testSchema('plain_alone');
const clock = new ManualClock();
let url: string;
let batchedGate: Fencegate;
let aloneGate: Fencegate;
let admin: pg.Pool;

beforeAll(async () => {
  url = pgUrl();
  // One batch in flight: whatever arrives while it runs forms the next batch.
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

/** The same history on a store: scopes in every state a plain commit can meet. */
async function history(gate: Fencegate): Promise<void> {
  await gate.acquire({ scope: 'a', holder: 'w', ttlMs: 600_000 });
  await gate.acquire({ scope: 'b', holder: 'w', ttlMs: 600_000 });
  await gate.acquire({ scope: 'short', holder: 'w', ttlMs: 1_000 });
  const released = await gate.acquire({ scope: 'released', holder: 'w', ttlMs: 600_000 });
  await gate.release({ scope: 'released', holder: 'w', fence: released.fence });
  const write = (operationId: string, name: string, expectRevision: number) =>
    gate.commit({
      scope: 'a',
      fence: 1,
      operationId,
      writes: [{ name, expectRevision, value: { from: operationId } }],
    });
  await write('h-existing', 'existing', 0);
  await write('h-life-1', 'life', 0);
  await gate.commit({
    scope: 'a',
    fence: 1,
    operationId: 'h-life-2',
    writes: [{ name: 'life', expectRevision: 1, delete: true }],
  });
  await write('h-life-3', 'life', 2);
  await write('h-done', 'done', 0);
  await write('h-gone-1', 'gone', 0);
  await gate.commit({
    scope: 'a',
    fence: 1,
    operationId: 'h-gone-2',
    writes: [{ name: 'gone', expectRevision: 1, delete: true }],
  });
  clock.advance(5_000);
}

/** One commit of every kind, in a plain batch. */
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

async function rows(schema: string) {
  const audit = await admin.query(
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
  return { audit: audit.rows, operations: operations.rows, records: records.rows };
}

it.skipIf(noPostgres)(
  'decides a plain batch exactly as the same commits one at a time, in one transaction',
  async () => {
    const start = clock.now();
    await history(batchedGate);
    clock.set(start);
    await history(aloneGate);

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

    // Sanity: the batch met every case it is meant to.
    expect(
      batchedAnswers.map((answer) =>
        typeof answer === 'string'
          ? answer
          : answer.outcome === 'rejected'
            ? answer.error.code
            : answer.replayed
              ? 'replayed'
              : 'committed',
      ),
    ).toEqual([
      'committed',
      'committed',
      'committed',
      'incarnation_changed',
      'replayed',
      'operation_id_conflict',
      'stale_revision',
      'stale_fence',
      'committed',
      'scope_not_found',
      'authority_revoked',
      'lease_expired',
    ]);
    expect(batchedAnswers).toEqual(aloneAnswers.slice(1));

    const { rows: xmins } = await admin.query<{ n: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM ${batched}.audit WHERE operation_id = ANY($1)`,
      [BATCH.map((request) => request.operationId).filter((id) => !id.startsWith('h-'))],
    );
    expect(xmins[0]?.n).toBe(1);

    const [b, a] = [await rows(batched), await rows(alone)];
    expect(b.records).toEqual(a.records);
    expect(b.operations).toEqual(a.operations);
    // BATCH is in scope order, the order a batch runs its items in: audit entries come out alike.
    expect(b.audit).toEqual(a.audit);
  },
);
