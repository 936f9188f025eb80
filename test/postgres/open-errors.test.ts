/**
 * Opening a PostgreSQL store that refuses the connection names the server's reason (a role or
 * database that does not exist), not a bare SQLSTATE, and never the password.
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { pgUrl } from './pg-helpers.js';

const noPostgres = skipWithoutPostgres();

async function openError(change: (url: URL) => void): Promise<{ code: string; message: string }> {
  const url = new URL(pgUrl());
  change(url);
  const error = await openStore(url.toString()).then(
    async (store) => {
      await store.close();
      throw new Error('the store opened');
    },
    (caught: unknown) => caught as { code: string; message: string },
  );
  return { code: error.code, message: error.message };
}

describe.skipIf(noPostgres)('opening a PostgreSQL store that refuses the connection', () => {
  it('names the missing role, the missing database, and never the password', async () => {
    const role = await openError((url) => {
      url.username = 'nouser';
      url.password = 'pw-never-shown';
    });
    expect(role.code).toBe('store_unavailable');
    expect(role.message).toContain('role "nouser" does not exist');
    expect(role.message).not.toContain('pw-never-shown');

    const database = await openError((url) => (url.pathname = '/no_such_database'));
    expect(database.code).toBe('store_unavailable');
    expect(database.message).toContain('database "no_such_database" does not exist');
  });
});
