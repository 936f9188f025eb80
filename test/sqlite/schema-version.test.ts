/**
 * A SQLite file migrated by a newer fencegate may hold rows in forms this version does not read
 * (stored outcomes in compact rows, for one), so opening it is refused, with nothing changed,
 * instead of misreading its rows.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();

afterAll(() => dir.cleanup());

describe('the schema version of a SQLite file', () => {
  it('a file migrated by a newer version is refused by name, and left as it is', async () => {
    const path = join(dir.path, 'newer.db');
    await SqliteStore.open({ path }).close();
    const known = Math.max(...SQLITE_MIGRATIONS.map((migration) => migration.version));
    const raw = new Database(path);
    raw
      .prepare(
        "INSERT INTO fencegate_migrations (version, name, applied_at) VALUES (?, 'later', datetime('now'))",
      )
      .run(known + 1);
    raw.close();

    let error: unknown;
    try {
      SqliteStore.open({ path });
    } catch (caught) {
      error = caught;
    }
    expect(isFencegateError(error) && error.code).toBe('store_unavailable');
    expect(isFencegateError(error) && error.message).toMatch(
      new RegExp(`schema ${known + 1}.*newer.*up to ${known}`),
    );
    const check = new Database(path, { readonly: true });
    const versions = check.prepare('SELECT MAX(version) AS v FROM fencegate_migrations').get();
    check.close();
    expect(versions).toEqual({ v: known + 1 });
  });

  it('a file at this version opens', async () => {
    const path = join(dir.path, 'current.db');
    await SqliteStore.open({ path }).close();
    const again = SqliteStore.open({ path });
    expect(await again.getScope('default', 'none')).toBeNull();
    await again.close();
  });
});
