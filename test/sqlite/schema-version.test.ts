/**
 * The schema version of a SQLite file. A file migrated by a newer fencegate may hold rows in forms
 * this version does not read (stored outcomes in compact rows, for one), and a file made before
 * the baseline schema by a pre-release version holds rows in forms no release reads: opening
 * either is refused, by its version and with what to do, and the file is left as it is.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { SQLITE_BASELINE_SQL } from '../../src/store/sqlite/sqlite-schema.js';
import { expectUpgradedGrant, SCHEMA_1_ROWS } from '../helpers/schema-1-grant.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();

afterAll(() => dir.cleanup());

function openError(path: string): unknown {
  try {
    SqliteStore.open({ path });
  } catch (caught) {
    return caught;
  }
  return undefined;
}

function tablesOf(path: string): string[] {
  const check = new Database(path, { readonly: true });
  const rows = check
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all() as { name: string }[];
  check.close();
  return rows.map((row) => row.name);
}

describe('the schema version of a SQLite file', () => {
  it('a new file gets the baseline and records each version once', async () => {
    const path = join(dir.path, 'fresh.db');
    await SqliteStore.open({ path }).close();
    await SqliteStore.open({ path }).close();
    const check = new Database(path, { readonly: true });
    const versions = check.prepare('SELECT version, name FROM fencegate_schema').all();
    check.close();
    expect(versions).toEqual(SQLITE_MIGRATIONS.map(({ version, name }) => ({ version, name })));
    expect(versions[0]).toEqual({ version: 1, name: 'baseline' });
  });

  it('a file migrated by a newer version is refused by name, and left as it is', async () => {
    const path = join(dir.path, 'newer.db');
    await SqliteStore.open({ path }).close();
    const known = Math.max(...SQLITE_MIGRATIONS.map((migration) => migration.version));
    const raw = new Database(path);
    raw
      .prepare(
        "INSERT INTO fencegate_schema (version, name, applied_at) VALUES (?, 'later', datetime('now'))",
      )
      .run(known + 1);
    raw.close();

    const error = openError(path);
    expect(isFencegateError(error) && error.code).toBe('store_unavailable');
    expect(isFencegateError(error) && error.message).toMatch(
      new RegExp(`schema ${known + 1}.*newer.*up to ${known}`),
    );
    const check = new Database(path, { readonly: true });
    const versions = check.prepare('SELECT MAX(version) AS v FROM fencegate_schema').get();
    check.close();
    expect(versions).toEqual({ v: known + 1 });
  });

  it('a file made before the baseline is refused with its version and what to do, and left as it is', () => {
    const path = join(dir.path, 'pre-release.db');
    const raw = new Database(path);
    raw.exec(`CREATE TABLE fencegate_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`);
    raw.exec(`CREATE TABLE operations (tenant TEXT, operation_id TEXT, outcome TEXT)`);
    const insert = raw.prepare(
      "INSERT INTO fencegate_migrations (version, name, applied_at) VALUES (?, ?, datetime('now'))",
    );
    for (let version = 1; version <= 17; version++) insert.run(version, `step ${version}`);
    raw.close();

    const error = openError(path);
    expect(isFencegateError(error) && error.code).toBe('store_unavailable');
    expect(isFencegateError(error) && error.message).toMatch(
      /pre-release fencegate \(schema 17 .*delete the file or open the store at a new path/,
    );
    expect(tablesOf(path)).toEqual(['fencegate_migrations', 'operations']);
  });

  it('a file at schema 1 gets version 2: its grants bind no token, its audit entries keep their hashes', async () => {
    const path = join(dir.path, 'schema-1.db');
    const raw = new Database(path);
    raw.exec(SQLITE_BASELINE_SQL);
    raw.exec(`CREATE TABLE fencegate_schema (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
      INSERT INTO fencegate_schema VALUES (1, 'baseline', datetime('now'));
      INSERT INTO scopes (${SCHEMA_1_ROWS.scopeColumns}) VALUES (${SCHEMA_1_ROWS.scope});
      INSERT INTO audit (${SCHEMA_1_ROWS.auditColumns}) VALUES (${SCHEMA_1_ROWS.audit});`);
    raw.close();

    const store = SqliteStore.open({ path });
    await expectUpgradedGrant(store);
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT version FROM fencegate_schema ORDER BY version').all()).toEqual(
      SQLITE_MIGRATIONS.map(({ version }) => ({ version })),
    );
    check.close();
  });

  it('a file at this version opens', async () => {
    const path = join(dir.path, 'current.db');
    await SqliteStore.open({ path }).close();
    const again = SqliteStore.open({ path });
    expect(await again.getScope('default', 'none')).toBeNull();
    await again.close();
  });
});
