/**
 * Stored outcomes on SQLite are kept compact (sqlite-operation-row.ts); a replay and
 * getOperation answer exactly what the commit answered, field order included.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
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
