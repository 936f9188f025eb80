/**
 * SQLite is durable by default: the connection every way of opening the store makes runs
 * synchronous=FULL, and `sqlite:PATH?synchronous=normal` is the one, explicit opt-out. The syncs
 * themselves are counted from outside a server in test/e2e/sqlite-durability.test.ts.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

async function synchronousOf(store: unknown): Promise<string> {
  expect(store).toBeInstanceOf(SqliteStore);
  const sqlite = store as SqliteStore;
  try {
    return await sqlite.synchronous();
  } finally {
    await sqlite.close();
  }
}

describe('SQLite synchronous mode', () => {
  it('is FULL on every connection the store opens unless the URL opts out', async () => {
    const path = join(dir.path, 'modes.db');
    expect(await synchronousOf(SqliteStore.open({ path }))).toBe('FULL');
    expect(await synchronousOf(SqliteStore.open({ path, groupCommit: true }))).toBe('FULL');
    expect(await synchronousOf(SqliteStore.open({ path: ':memory:' }))).toBe('FULL');
    expect(await synchronousOf(await openStore(`sqlite:${path}`))).toBe('FULL');
    expect(await synchronousOf(await openStore(`sqlite:${path}`, { groupCommit: true }))).toBe(
      'FULL',
    );
    expect(await synchronousOf(await openStore(`sqlite:${path}?synchronous=full`))).toBe('FULL');
    expect(await synchronousOf(await openStore(`sqlite:${path}?synchronous=normal`))).toBe(
      'NORMAL',
    );
    expect(await synchronousOf(await openStore(`sqlite:${path}?synchronous=NORMAL`))).toBe(
      'NORMAL',
    );
    const gate = await Fencegate.open({ store: `sqlite:${path}` });
    expect(await synchronousOf(gate.store)).toBe('FULL');
  });

  it('refuses an unknown option or mode in the URL with invalid_request naming it', async () => {
    const path = join(dir.path, 'bad.db');
    await expect(openStore(`sqlite:${path}?synchronous=off`)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('synchronous=off') as unknown,
    });
    await expect(openStore(`sqlite:${path}?journal=delete`)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('journal') as unknown,
    });
    await expect(openStore('sqlite:?synchronous=normal')).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });
});
