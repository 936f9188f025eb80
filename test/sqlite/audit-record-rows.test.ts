/**
 * An audit entry's record changes are kept compact on SQLite (sqlite-audit-row.ts): the entry
 * reads back with every field, in the order it was built.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import type { AuditEntry } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
const path = join(dir.path, 'audit-rows.db');
let gate: Fencegate;

beforeAll(async () => {
  gate = await Fencegate.open({ store: `sqlite:${path}` });
  const { fence } = await gate.acquire({ scope: 'rows', holder: 'w', ttlMs: 3_600_000 });
  await gate.commit({
    scope: 'rows',
    fence,
    operationId: 'accepted',
    writes: [
      { name: 'a', expectRevision: 0, value: { n: 1 } },
      { name: 'b', expectRevision: 0, value: 'text' },
    ],
  });
  await gate.commit({
    scope: 'rows',
    fence: fence + 1,
    operationId: 'refused',
    writes: [{ name: 'a', expectRevision: 1, delete: true }],
  });
});

afterAll(async () => {
  await gate.close();
  dir.cleanup();
});

function rawRecords(operationId: string): unknown {
  const db = new Database(path, { readonly: true });
  const row = db.prepare('SELECT records FROM audit WHERE operation_id = ?').get(operationId) as {
    records: string;
  };
  db.close();
  return JSON.parse(row.records);
}

async function entryOf(operationId: string): Promise<AuditEntry | undefined> {
  const { items } = await gate.audit({ kind: 'commit', limit: 100 });
  return items.find((entry) => entry.operationId === operationId);
}

describe("audit entries' record changes on SQLite", () => {
  it('are stored as arrays without field names and read back whole, in order', async () => {
    const accepted = await entryOf('accepted');
    const refused = await entryOf('refused');
    expect(rawRecords('accepted')).toEqual(
      accepted?.records?.map((r) => [
        r.name,
        r.expected,
        r.actual,
        r.resulting,
        r.fingerprint,
        r.deleted ? 1 : 0,
      ]),
    );
    expect(rawRecords('refused')).toEqual([['a', 1, 1, null, null, 1]]);
    expect(JSON.stringify(refused?.records)).toBe(
      JSON.stringify([
        { name: 'a', expected: 1, actual: 1, resulting: null, fingerprint: null, deleted: true },
      ]),
    );
    expect(accepted?.records?.map((r) => [r.name, r.resulting, r.deleted])).toEqual([
      ['a', 1, false],
      ['b', 1, false],
    ]);
  });
});
