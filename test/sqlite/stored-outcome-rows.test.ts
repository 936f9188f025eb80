/**
 * Stored outcomes on SQLite are kept compact (sqlite-operation-row.ts); a replay and
 * getOperation answer exactly what the commit answered, field order included, and rows written
 * in the earlier form (the whole outcome as JSON, the fingerprint as hex text) still answer.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFingerprint } from '../../src/core/commit-check.js';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { validateCommit } from '../../src/core/validate.js';
import type { CommitRequest, Grant } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
const path = join(dir.path, 'outcomes.db');
let gate: Fencegate;
let grant: Grant;

beforeAll(async () => {
  gate = await Fencegate.open({ store: `sqlite:${path}` });
  grant = await gate.acquire({ scope: 'rows', holder: 'w', ttlMs: 3_600_000 });
});

afterAll(async () => {
  await gate.close();
  dir.cleanup();
});

function request(operationId: string, expectRevision: number): CommitRequest {
  return {
    scope: 'rows',
    fence: grant.fence,
    operationId,
    writes: [
      { name: 'a', expectRevision, value: { text: 'quote " and \u00e9', n: 1 } },
      { name: `b-${operationId}`, expectRevision: 0, value: [1, 2] },
    ],
    intents: [{ effectKey: `mail-${operationId}`, target: 'mail', payload: { to: 'x' } }],
  };
}

/** Writes an operations row as an earlier version would have, behind the store's back. */
function storeRow(operationId: string, fingerprint: string | Buffer, outcome: string): void {
  const db = new Database(path);
  db.prepare(
    `INSERT INTO operations (tenant, operation_id, request_fingerprint, outcome, created_at)
     VALUES ('default', ?, ?, ?, 0)`,
  ).run(operationId, fingerprint, outcome);
  db.close();
}

describe('stored outcomes on SQLite', () => {
  it('a committed outcome replays exactly as it was answered', async () => {
    const answered = await gate.commit(request('compact-1', 0));
    expect(answered.outcome).toBe('committed');
    const replayed = await gate.commit(request('compact-1', 0));
    expect(JSON.stringify(replayed)).toBe(JSON.stringify({ ...answered, replayed: true }));
    const stored = await gate.getOperation('compact-1');
    expect(JSON.stringify(stored)).toBe(JSON.stringify(answered));
  });

  it('a refused outcome replays exactly as it was answered', async () => {
    const answered = await gate.commit(request('compact-2', 7));
    expect(answered.outcome).toBe('rejected');
    const replayed = await gate.commit(request('compact-2', 7));
    expect(JSON.stringify(replayed)).toBe(JSON.stringify({ ...answered, replayed: true }));
    expect(JSON.stringify(await gate.getOperation('compact-2'))).toBe(JSON.stringify(answered));
    const conflict = await gate.commit(request('compact-2', 8)).catch((error: unknown) => error);
    expect(conflict).toMatchObject({ code: 'operation_id_conflict' });
  });

  it("a refusal's row keeps its error as code, message and details, without their names", async () => {
    const answered = await gate.commit(request('compact-3', 9));
    expect(answered.outcome).toBe('rejected');
    const db = new Database(path, { readonly: true });
    const row = db
      .prepare(`SELECT outcome FROM operations WHERE operation_id = 'compact-3'`)
      .get() as { outcome: string };
    db.close();
    const { error } = answered as Extract<typeof answered, { outcome: 'rejected' }>;
    expect(JSON.parse(row.outcome)).toEqual([1, error.code, error.message, error.details]);
  });

  it('refusals written with their error as an object still answer', async () => {
    const error = {
      code: 'stale_revision',
      message: 'record a was expected at revision 4; it is at revision 1',
      details: { name: 'a', expected: 4, actual: 1, exists: true },
    };
    const legacyRequest = request('legacy-2', 4);
    const fingerprint = requestFingerprint(validateCommit(legacyRequest));
    storeRow('legacy-2', Buffer.from(fingerprint, 'hex'), JSON.stringify([1, error]));

    const stored = { outcome: 'rejected', operationId: 'legacy-2', replayed: false, error };
    expect(JSON.stringify(await gate.getOperation('legacy-2'))).toBe(JSON.stringify(stored));
    expect(await gate.commit(legacyRequest)).toEqual({ ...stored, replayed: true });
  });

  it('rows written as the whole outcome and a hex fingerprint still answer', async () => {
    const legacy = {
      outcome: 'committed',
      operationId: 'legacy-1',
      scope: 'rows',
      fence: grant.fence,
      records: [{ name: 'old', revision: 3, incarnation: 1, fingerprint: 'f'.repeat(64) }],
      intents: [],
      replayed: false,
    };
    const legacyRequest = request('legacy-1', 0);
    const fingerprint = requestFingerprint(validateCommit(legacyRequest));
    storeRow('legacy-1', fingerprint, JSON.stringify(legacy));

    expect(await gate.getOperation('legacy-1')).toEqual(legacy);
    expect(await gate.commit(legacyRequest)).toEqual({ ...legacy, replayed: true });
    const conflict = await gate.commit(request('legacy-1', 5)).catch((error: unknown) => error);
    expect(conflict).toMatchObject({ code: 'operation_id_conflict' });
  });
});

describe('stored outcomes of one group-commit batch', () => {
  it('a second request under the operationId of the batch is a conflict, the first stays stored', async () => {
    const batched = await Fencegate.open({
      store: SqliteStore.open({ path: join(dir.path, 'batch.db'), groupCommit: true }),
    });
    try {
      const { fence } = await batched.acquire({ scope: 'b', holder: 'w', ttlMs: 3_600_000 });
      const commit = (value: number) =>
        batched.commit({
          scope: 'b',
          fence,
          operationId: 'same',
          writes: [{ name: 'r', expectRevision: 0, value }],
        });
      const [first, second] = await Promise.allSettled([commit(1), commit(2)]);
      expect(first).toMatchObject({ status: 'fulfilled', value: { outcome: 'committed' } });
      expect(second).toMatchObject({
        status: 'rejected',
        reason: { code: 'operation_id_conflict' },
      });
      const stored = await batched.getOperation('same');
      expect(JSON.stringify(stored)).toBe(
        JSON.stringify((first as PromiseFulfilledResult<unknown>).value),
      );
      expect((await batched.getRecord('b', 'r')).value).toBe(1);
    } finally {
      await batched.close();
    }
  });
});
