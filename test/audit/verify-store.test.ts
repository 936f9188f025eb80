/**
 * verifyStore, the violation counter and the `verify` command against real SQLite stores: a
 * store driven through the scenarios verifies clean, and a store file whose audit log was
 * tampered with on disk is caught.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyCheckpoint, loadCheckpoint } from '../../src/audit/checkpoint.js';
import { createViolationCounter } from '../../src/audit/violation-gauge.js';
import { verifyStore } from '../../src/audit/verify.js';
import { runVerify } from '../../src/cli/verify-command.js';
import type { CliIo } from '../../src/cli/command.js';
import { Fencegate } from '../../src/gate.js';
import { recordsColumn, recordsOf } from '../../src/store/sqlite/sqlite-audit-row.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditRecordChange } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  driveStore,
  OTHER_TENANT,
  readAll,
  S1,
  TENANT,
  type StoreHistory,
} from './store-history.js';

const dir = tempDir();
let clean: StoreHistory;
let tamperedPath: string;
let staleSeq: number;

beforeAll(async () => {
  clean = await driveStore(dir.path, 'clean.db');
  // A second store, then its audit log edited on disk: the stale commit of worker a now reads as
  // accepted, as a store that skipped the fence check would have written it.
  const second = await driveStore(dir.path, 'tampered.db');
  tamperedPath = second.path;
  await second.gate.close();
  const db = new Database(tamperedPath);
  const row = db.prepare(`SELECT seq, records FROM audit WHERE operation_id = 'a-stale'`).get() as {
    seq: number;
    records: string;
  };
  staleSeq = row.seq;
  // A refusal decided by the scope row alone (a fence below the current one) is audited without
  // its records: give it the write of `notes` it would have made, at the revision notes had then.
  const stored = recordsOf(row.records) ?? wouldWriteNotes(db, staleSeq);
  const records = stored.map((r) => ({ ...r, resulting: r.actual + 1 }));
  db.prepare(
    `UPDATE audit SET outcome = 'committed', reason = NULL, records = ? WHERE seq = ?`,
  ).run(recordsColumn(records), staleSeq);
  // Later writes of that record carry on from the revision it wrongly got.
  const later = db
    .prepare(
      `SELECT seq, records FROM audit WHERE seq > ? AND tenant = ? AND scope = ? AND records IS NOT NULL`,
    )
    .all(staleSeq, TENANT, S1) as { seq: number; records: string }[];
  for (const entry of later) {
    const shifted = (recordsOf(entry.records) ?? []).map((r) =>
      r.name !== 'notes'
        ? r
        : r.resulting === null
          ? { ...r, actual: r.actual + 1 }
          : { ...r, expected: r.expected + 1, actual: r.actual + 1, resulting: r.resulting + 1 },
    );
    db.prepare(`UPDATE audit SET records = ? WHERE seq = ?`).run(recordsColumn(shifted), entry.seq);
  }
  db.close();
});

/** The change of `notes` in S1 a commit at `seq` would have written: from its revision then. */
function wouldWriteNotes(db: Database.Database, seq: number): AuditRecordChange[] {
  const earlier = db
    .prepare(
      `SELECT records FROM audit WHERE seq < ? AND tenant = ? AND scope = ? AND records IS NOT NULL ORDER BY seq`,
    )
    .all(seq, TENANT, S1) as { records: string }[];
  let revision = 0;
  for (const entry of earlier) {
    for (const r of recordsOf(entry.records) ?? []) {
      if (r.name === 'notes' && r.resulting !== null) revision = r.resulting;
    }
  }
  const change = { expected: revision, actual: revision, resulting: null, fingerprint: null };
  return [{ name: 'notes', ...change, deleted: false }];
}

afterAll(async () => {
  await clean.gate.close();
  dir.cleanup();
});

describe('verifyStore', () => {
  it('verifies a real store history, all tenants or one', async () => {
    const all = await readAll(clean.gate);
    const result = await verifyStore(clean.store, { pageSize: 7 });
    expect(result.violations).toEqual([]);
    expect(result).toMatchObject({ ok: true, checked: all.length, lastSeq: all.at(-1)!.seq });
    const acme = await verifyStore(clean.store, { tenant: TENANT });
    const other = await verifyStore(clean.store, { tenant: OTHER_TENANT });
    expect(acme.ok && other.ok).toBe(true);
    expect(acme.checked + other.checked).toBe(all.length);
    expect(other.checked).toBe(all.filter((e) => e.tenant === OTHER_TENANT).length);
  });

  it('continues from a checkpoint, reading only the entries appended since', async () => {
    const store = SqliteStore.open({
      path: join(dir.path, 'incremental.db'),
      clock: new ManualClock(),
    });
    const gate = await Fencegate.open({ store, tenant: TENANT });
    try {
      const grant = await gate.acquire({ scope: 'inc', holder: 'w', ttlMs: 60_000 });
      await gate.commit({
        scope: 'inc',
        fence: grant.fence,
        operationId: 'i-1',
        writes: [{ name: 'r', expectRevision: 0, value: 1 }],
      });
      const first = await verifyStore(store);
      expect(first).toMatchObject({ ok: true, checked: 2 });
      await gate.commit({
        scope: 'inc',
        fence: grant.fence,
        operationId: 'i-2',
        writes: [{ name: 'r', expectRevision: 1, value: 2 }],
      });
      const taken = await gate.takeover('inc', { holder: 'op' });
      await gate.commit({
        scope: 'inc',
        fence: grant.fence,
        operationId: 'i-3',
        writes: [{ name: 'r', expectRevision: 2, value: 3 }],
      });
      await gate.commit({
        scope: 'inc',
        fence: taken.fence,
        operationId: 'i-4',
        writes: [{ name: 'r', expectRevision: 2, value: 4 }],
      });
      const second = await verifyStore(store, { checkpoint: first.checkpoint });
      expect(second).toMatchObject({ ok: true, checked: 4, totalChecked: 6, violations: [] });
      expect(second.checkpoint).toEqual((await verifyStore(store)).checkpoint);
      const nothingNew = await verifyStore(store, { checkpoint: second.checkpoint });
      expect(nothingNew).toMatchObject({
        ok: true,
        checked: 0,
        totalChecked: 6,
        lastSeq: second.lastSeq,
      });
    } finally {
      await gate.close();
    }
  });

  it('refuses a checkpoint made for another tenant selection', async () => {
    await expect(
      verifyStore(clean.store, { tenant: TENANT, checkpoint: emptyCheckpoint(null) }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
  });

  it('finds the violation in a store file whose audit log was tampered with', async () => {
    const store = SqliteStore.open({ path: tamperedPath });
    try {
      const result = await verifyStore(store);
      expect(result.ok).toBe(false);
      expect(result.violations.map(({ kind, seq }) => ({ kind, seq }))).toEqual([
        { kind: 'stale_commit_accepted', seq: staleSeq },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('violation counter', () => {
  it('counts violations of the whole history and reads only new entries on each call', async () => {
    const store = SqliteStore.open({ path: tamperedPath });
    try {
      const count = createViolationCounter(store);
      const [a, b] = await Promise.all([count(), count()]);
      expect([a, b]).toEqual([1, 1]);
      const gate = await Fencegate.open({ store, tenant: TENANT });
      await gate.acquire({ scope: 'fresh', holder: 'w', ttlMs: 60_000 });
      expect(await count()).toBe(1);
      expect(await createViolationCounter(clean.store)()).toBe(0);
      expect(await createViolationCounter(store, { tenant: OTHER_TENANT })()).toBe(0);
    } finally {
      await store.close();
    }
  });
});

function captureIo(
  env: Record<string, string | undefined> = {},
): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    env,
    stdout(text: string) {
      io.out += text;
    },
    stderr(text: string) {
      io.err += text;
    },
  };
  return io;
}

describe('fencegate verify command', () => {
  it('exits 0 with a readable summary on a valid store, and prints JSON with --json', async () => {
    const io = captureIo();
    expect(await runVerify(['--store', `sqlite:${clean.path}`], io)).toBe(0);
    expect(io.out).toMatch(/audit entries checked/);
    expect(io.out).toMatch(/^ok: no violation/m);

    const json = captureIo({ FENCEGATE_STORE: `sqlite:${clean.path}` });
    expect(await runVerify(['--json', '--tenant', OTHER_TENANT], json)).toBe(0);
    expect(JSON.parse(json.out)).toMatchObject({
      ok: true,
      tenant: OTHER_TENANT,
      violations: [],
      violationCount: 0,
    });
  });

  it('exits 3 and says nothing was checked when the tenant has no audit entry, never "ok"', async () => {
    for (const argv of [
      ['--tenant', 'acmee'],
      ['--tenant', 'acmee', '--json'],
    ]) {
      const io = captureIo();
      expect(await runVerify(['--store', `sqlite:${clean.path}`, ...argv], io)).toBe(3);
      expect(io.out).not.toMatch(/^ok/m);
      expect(io.err).toContain(
        'nothing was checked: tenant acmee has no audit entry in this store',
      );
    }
  });

  it('says plainly that a store with no audit entry at all has nothing to check, exit 3', async () => {
    const emptyPath = join(dir.path, 'empty.db');
    await SqliteStore.open({ path: emptyPath }).close();
    const io = captureIo();
    expect(await runVerify(['--store', `sqlite:${emptyPath}`], io)).toBe(3);
    expect(io.err).toContain('nothing was checked: the store holds no audit entry');
    expect(io.err).not.toMatch(/no tenant has no/);
  });

  it('exits 1 and names the entry on a tampered store; a checkpoint keeps the verdict', async () => {
    const io = captureIo();
    const checkpoint = join(dir.path, 'cli-checkpoint.json');
    expect(
      await runVerify(['--store', `sqlite:${tamperedPath}`, '--checkpoint', checkpoint], io),
    ).toBe(1);
    expect(io.out).toContain(`seq ${staleSeq}  stale_commit_accepted  ${TENANT}/${S1}`);
    expect((await loadCheckpoint(checkpoint))!.violations).toBe(1);

    const again = captureIo();
    expect(
      await runVerify(
        ['--store', `sqlite:${tamperedPath}`, '--checkpoint', checkpoint, '--json'],
        again,
      ),
    ).toBe(1);
    expect(JSON.parse(again.out)).toMatchObject({
      ok: false,
      checked: 0,
      violationCount: 0,
      totalViolations: 1,
    });
  });

  it('exits 2 on usage errors and 0 for --help', async () => {
    const help = captureIo();
    expect(await runVerify(['--help'], help)).toBe(0);
    expect(help.out).toMatch(/Usage: fencegate verify/);
    for (const argv of [
      ['--bogus'],
      ['--tenant', 'Not A Tenant', '--store', `sqlite:${clean.path}`],
      ['--store', `sqlite:${join(dir.path, 'missing.db')}`],
      ['--store', 'redis://nowhere'],
      [
        '--store',
        `sqlite:${clean.path}`,
        '--tenant',
        TENANT,
        '--checkpoint',
        join(dir.path, 'cli-checkpoint.json'),
      ],
    ]) {
      const io = captureIo();
      expect(await runVerify(argv, io), argv.join(' ')).toBe(2);
      expect(io.err).toMatch(/fencegate verify: /);
    }
  });

  it('exits 3 when the checkpoint file cannot be read', async () => {
    const io = captureIo();
    expect(await runVerify(['--store', `sqlite:${clean.path}`, '--checkpoint', dir.path], io)).toBe(
      3,
    );
    expect(io.err).toMatch(/could not be verified/);
  });
});
