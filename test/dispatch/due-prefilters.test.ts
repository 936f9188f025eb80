/**
 * A claim plans over the open intents a store lists for it (core/plan/plan-intents.ts claimRange):
 * SQLite and PostgreSQL list only the first `limit` due ones, by SQL. That SQL may admit more than
 * isClaimable accepts (the plan filters again), never fewer, and must hand over the claimable ones
 * in claim order (due time, then effect key), or a claim would take later intents than it should.
 * Checked on random outboxes against real SQLite and real PostgreSQL.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isClaimable } from '../../src/core/intent-rules.js';
import { claimRange } from '../../src/core/plan/plan-intents.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { PendingRows } from '../../src/store/sqlite/sqlite-pending-rows.js';
import { SqliteRowStatements } from '../../src/store/sqlite/sqlite-row-statements.js';
import { SqliteSnapshot } from '../../src/store/sqlite/sqlite-snapshot.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { fc } from '../../src/testing/property.js';
import { INTENT_STATUSES, type ClaimIntentsRequest, type IntentStatus } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema } from '../postgres/pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { tempDir } from '../helpers/temp-dir.js';

const TENANT = 't';
const TARGETS = ['a', 'b', 'c'];

interface OutboxIntent {
  effectKey: string;
  target: string;
  status: IntentStatus;
  claimExpiresAt: number | null;
  nextAttemptAt: number | null;
  createdAt: number;
}

/** Small times, so that ties in due time and times equal to `now` are common. */
const time = fc.integer({ min: 0, max: 12 });

const outbox = fc.uniqueArray(
  fc.record({
    effectKey: fc.stringMatching(/^[a-d]{1,3}$/),
    target: fc.constantFrom(...TARGETS),
    status: fc.constantFrom(...INTENT_STATUSES),
    claimExpiresAt: fc.option(time),
    nextAttemptAt: fc.option(time),
    createdAt: time,
  }),
  { selector: (intent) => intent.effectKey, maxLength: 14 },
);

const claim = fc.record({
  now: time,
  limit: fc.integer({ min: 1, max: 6 }),
  targets: fc.option(fc.subarray(TARGETS, { minLength: 1 })),
});

type Claim = { now: number; limit: number; targets: string[] | null };

/** What a claim must be offered: the first `limit` claimable intents, in claim order. */
function claimable(intents: readonly OutboxIntent[], { now, limit, targets }: Claim): string[] {
  return intents
    .filter(
      (intent) =>
        isClaimable({ ...intent, claimFence: 0 }, now) &&
        (targets === null || targets.includes(intent.target)),
    )
    .sort(
      (a, b) =>
        (a.nextAttemptAt ?? a.createdAt) - (b.nextAttemptAt ?? b.createdAt) ||
        (a.effectKey < b.effectKey ? -1 : a.effectKey > b.effectKey ? 1 : 0),
    )
    .slice(0, limit)
    .map((intent) => intent.effectKey);
}

function rowOf(intent: OutboxIntent): unknown[] {
  return [
    TENANT,
    intent.effectKey,
    's',
    intent.target,
    '{}',
    intent.status,
    1,
    'op',
    intent.claimExpiresAt,
    intent.nextAttemptAt,
    intent.createdAt,
    intent.createdAt,
  ];
}

/** The columns rowOf gives, the others taking their defaults. */
const COLUMNS = `tenant, effect_key, scope, target, payload, status, fence, operation_id,
  claim_expires_at, next_attempt_at, created_at, updated_at`;
const COLUMN_COUNT = COLUMNS.split(',').length;

/** Runs the property with `listed`, the keys a store's prefilter hands a claim. */
async function checkPrefilter(
  listed: (intents: readonly OutboxIntent[], request: Claim) => Promise<string[]>,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(outbox, claim, async (intents, request) => {
      const keys = await listed(intents, request);
      const expected = claimable(intents, request);
      const accepted = new Set(claimable(intents, { ...request, limit: intents.length + 1 }));
      // Every key it lists is an open intent; the claimable ones among them start with the
      // first `limit` claimable, in claim order.
      expect(keys.filter((key) => accepted.has(key)).slice(0, expected.length)).toEqual(expected);
      expect(new Set(keys).size).toBe(keys.length);
    }),
    { numRuns: 100 },
  );
}

describe('the due prefilter of a claim admits every intent isClaimable accepts, in its order', () => {
  describe('on SQLite', () => {
    const dir = tempDir('fencegate-due-');
    let db: Database.Database;
    beforeAll(async () => {
      const path = join(dir.path, 'due.db');
      await SqliteStore.open({ path }).close();
      db = new Database(path);
    });
    afterAll(() => {
      db.close();
      dir.cleanup();
    });

    it('the first limit due intents, by due time then effect key, targets filtered', async () => {
      const values = new Array<string>(COLUMN_COUNT).fill('?').join(', ');
      const insert = db.prepare(`INSERT INTO intents (${COLUMNS}) VALUES (${values})`);
      const rows = new SqliteRowStatements(db);
      await checkPrefilter((intents, { now, limit, targets }) => {
        db.prepare('DELETE FROM intents').run();
        for (const intent of intents) insert.run(...rowOf(intent));
        const snapshot = new SqliteSnapshot(TENANT, now, rows, new PendingRows());
        return Promise.resolve(snapshot.list(claimRange(now, claimOf(targets), limit)));
      });
    });
  });

  describe.skipIf(skipWithoutPostgres())('on PostgreSQL', () => {
    const schema = testSchema('due_prefilter');
    let client: pg.Client;
    beforeAll(async () => {
      const url = new URL(pgUrl());
      url.searchParams.set('schema', schema);
      await (await PostgresStore.open({ url: url.toString() })).close();
      client = new pg.Client({ connectionString: pgUrl() });
      await client.connect();
    });
    afterAll(async () => {
      await client.end();
      await dropSchema(pgUrl(), schema);
    });

    it('the first limit due intents, by due time then effect key, targets filtered', async () => {
      const values = Array.from({ length: COLUMN_COUNT }, (_, i) => `$${i + 1}`).join(', ');
      await checkPrefilter(async (intents, { now, limit, targets }) => {
        await client.query(`DELETE FROM ${schema}.intents`);
        for (const intent of intents) {
          await client.query(
            `INSERT INTO ${schema}.intents (${COLUMNS}, row_version) VALUES (${values}, 1)`,
            rowOf(intent),
          );
        }
        const range = claimRange(now, claimOf(targets), limit);
        const { rows } = await client.query<{ names: string[] }>(
          `SELECT ${schema}.range_names($1, $2::jsonb) AS names`,
          [TENANT, JSON.stringify(range)],
        );
        return rows[0]!.names;
      });
    });
  });
});

/** A claim request for `targets`; claimRange reads no other field of it. */
function claimOf(targets: string[] | null): ClaimIntentsRequest {
  return { dispatcher: 'd', limit: 1, ttlMs: 1, ...(targets === null ? {} : { targets }) };
}
