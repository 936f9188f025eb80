/**
 * A SQLite file written at schema version 1, before rollouts existed, with its scopes pinned to v7
 * and their history in the audit log: opened by this version, it gets every later version, and a
 * rollout then ramps its scopes as on a new file. The rows are written as version 1 wrote them
 * (its baseline SQL and columns), not by this version's code, so what the migrations add (the
 * rollout documents' table, the grant token columns) is what the rollout runs on.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/sqlite-migrations.js';
import { SQLITE_BASELINE_SQL } from '../../src/store/sqlite/sqlite-schema.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { readAudit } from '../cutover/cutover-helpers.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();

afterAll(() => dir.cleanup());

const TENANT = 'acme';
const HOUR = 3_600_000;
const ROLLOUT = 'r-upgraded';
/** Under the rollout's prefix, and one scope outside it. */
const SCOPES = Array.from({ length: 40 }, (_, i) => `wf-${String(i).padStart(2, '0')}/memory`);
const OUTSIDE = 'orders/1';

/**
 * A file at schema 1: v7 and v8 registered, and each scope acquired by a v7 worker (which pinned
 * it to v7 at fence 1) and released, with the two audit entries version 1 wrote for them.
 */
function writeSchema1File(path: string): void {
  const raw = new Database(path);
  raw.exec(SQLITE_BASELINE_SQL);
  raw.exec(`CREATE TABLE fencegate_schema (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
    INSERT INTO fencegate_schema VALUES (1, 'baseline', datetime('now'));`);
  const policy = raw.prepare(
    `INSERT INTO policies (tenant, version, digest, description, registered_by, registered_at)
     VALUES (?, ?, NULL, NULL, NULL, 1)`,
  );
  const scope = raw.prepare(
    `INSERT INTO scopes (tenant, scope, fence, holder, lease_expires_at, policy_version, status,
       updated_at) VALUES (?, ?, 1, NULL, NULL, 'v7', 'active', ?)`,
  );
  const audit = raw.prepare(
    `INSERT INTO audit (at, tenant, scope, kind, outcome, holder, policy_version, fence,
       current_fence, lease_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`,
  );
  raw.transaction(() => {
    for (const version of ['v7', 'v8']) policy.run(TENANT, version);
    [...SCOPES, OUTSIDE].forEach((name, i) => {
      const at = 1000 + i;
      scope.run(TENANT, name, at);
      audit.run(at, TENANT, name, 'acquire', 'granted', 'v7-w', 'v7', null, at + HOUR);
      audit.run(at, TENANT, name, 'release', 'ok', null, null, 1, null);
    });
  })();
  raw.close();
}

describe('a rollout on a SQLite file upgraded from schema 1', () => {
  it('ramps the scopes pinned before the upgrade: a step moves the ones the hash admits and leaves the rest', async () => {
    const path = join(dir.path, 'schema-1-rollout.db');
    writeSchema1File(path);
    const admitted = (percent: number) => SCOPES.filter((name) => admits(ROLLOUT, name, percent));
    const first = admitted(25);
    const second = admitted(50);
    // Some scopes move at each step and some stay after both, so every expectation below counts.
    expect(first.length).toBeGreaterThan(0);
    expect(second.length).toBeGreaterThan(first.length);
    expect(second.length).toBeLessThan(SCOPES.length);

    const store = SqliteStore.open({ path, clock: new ManualClock() });
    const gate = await Fencegate.open({ store, tenant: TENANT });
    try {
      const check = new Database(path, { readonly: true });
      const versions = check.prepare('SELECT version FROM fencegate_schema ORDER BY version').all();
      check.close();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map(({ version }) => ({ version })));

      const started = await gate.rollouts.start({
        rolloutId: ROLLOUT,
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [25, 50, 100],
      });
      expect(started).toMatchObject({ status: 'running', step: 1, percent: 25, cutoverDone: true });
      const advanced = await gate.rollouts.advance({ rolloutId: ROLLOUT });
      expect(advanced).toMatchObject({
        status: 'running',
        step: 2,
        percent: 50,
        cutoverDone: true,
      });

      // Each admitted scope moved once, by the first step that admitted it: fence + 1, released,
      // on v8. The others keep what version 1 wrote.
      for (const name of [...SCOPES, OUTSIDE]) {
        const expected = second.includes(name)
          ? { fence: 2, holder: null, leaseExpiresAt: null, policyVersion: 'v8', status: 'active' }
          : { fence: 1, holder: null, leaseExpiresAt: null, policyVersion: 'v7', status: 'active' };
        expect({ name, ...(await gate.getScope(name)) }).toMatchObject({ name, ...expected });
      }
      const moves = (await readAudit(gate, { kind: 'cutover' })).map((entry) => [
        entry.reason,
        entry.scope,
      ]);
      expect(moves).toEqual([
        ...first.map((name) => [`${ROLLOUT}/step-1`, name]),
        ...second
          .filter((name) => !first.includes(name))
          .map((name) => [`${ROLLOUT}/step-2`, name]),
      ]);
      const report = await gate.rollouts.report(ROLLOUT);
      expect(report?.steps.map(({ moved, skipped }) => ({ moved, skipped }))).toEqual([
        { moved: first.length, skipped: 0 },
        { moved: second.length - first.length, skipped: 0 },
      ]);

      // The history, version 1's entries and the rollout's, verifies.
      const verified = await gate.verify();
      expect(verified.violations).toEqual([]);
      expect(verified.ok).toBe(true);
    } finally {
      await gate.close();
    }
  });
});
