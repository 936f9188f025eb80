/**
 * WAL pages written per commit on SQLite, with and without the audit log's tenant index, in the
 * same run: a count of the pages each commit puts into the WAL does not move with the machine's
 * load the way rates do. One at a time (one transaction per commit) and group commit (256 in
 * flight), with one tenant and with four interleaved tenants. Once its pages are counted,
 * `verify` replays each file's history.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Fencegate } from '../src/gate.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { violationsIn } from './verified-history.js';

const SCOPES = 256;

interface PagesRun {
  label: string;
  withIndex: number;
  withoutIndex: number;
  /** Violations `verify` found in the run's two files (with and without the index). */
  verifyViolations: number;
}

interface PagesCount {
  pages: number;
  violations: number;
}

async function pagesPerCommit(
  path: string,
  tenantIndex: boolean,
  group: boolean,
  tenants: number,
): Promise<PagesCount> {
  await SqliteStore.open({ path }).close();
  if (!tenantIndex) {
    const db = new Database(path);
    db.exec('DROP INDEX audit_by_tenant');
    db.close();
  }
  const store = SqliteStore.open({ path, groupCommit: group });
  const gate = await Fencegate.open({ store });
  const gates = Array.from({ length: tenants }, (_, t) => gate.forTenant(`t${t}`));
  const fences: number[] = [];
  for (let i = 0; i < SCOPES; i++) {
    const grant = await gates[i % tenants]!.acquire({ scope: `s-${i}`, holder: 'b', ttlMs: 3.6e6 });
    fences.push(grant.fence);
  }
  const probe = new Database(path);
  const walFrames = (mode: string) =>
    (probe.pragma(`wal_checkpoint(${mode})`) as { log: number }[])[0]?.log ?? 0;
  walFrames('TRUNCATE');
  // Below the store's autocheckpoint (10,000 pages), so no checkpoint resets the count.
  const commits = group ? 4096 : 1024;
  const revisions = new Array<number>(SCOPES).fill(0);
  const commit = async (i: number) => {
    const s = i % SCOPES;
    const expectRevision = revisions[s] ?? 0;
    revisions[s] = expectRevision + 1;
    await gates[s % tenants]!.commit({
      scope: `s-${s}`,
      fence: fences[s] ?? 0,
      operationId: `op-${i}`,
      writes: [{ name: 'memory', expectRevision, value: { n: i } }],
    });
  };
  if (group) {
    for (let start = 0; start < commits; start += SCOPES) {
      await Promise.all(Array.from({ length: SCOPES }, (_, k) => commit(start + k)));
    }
  } else {
    for (let i = 0; i < commits; i++) await commit(i);
  }
  const pages = walFrames('PASSIVE') / commits;
  probe.close();
  const violations = await violationsIn(store);
  await gate.close();
  return { pages, violations };
}

export async function runWalPagesBench(): Promise<PagesRun[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-wal-'));
  let n = 0;
  const runs: PagesRun[] = [];
  try {
    for (const [label, group, tenants] of [
      ['one at a time, 1 tenant', false, 1],
      ['one at a time, 4 tenants', false, 4],
      ['group commit, 1 tenant', true, 1],
      ['group commit, 4 tenants', true, 4],
    ] as const) {
      const withIndex = await pagesPerCommit(join(dir, `${++n}.db`), true, group, tenants);
      const withoutIndex = await pagesPerCommit(join(dir, `${++n}.db`), false, group, tenants);
      runs.push({
        label,
        withIndex: withIndex.pages,
        withoutIndex: withoutIndex.pages,
        verifyViolations: withIndex.violations + withoutIndex.violations,
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return runs;
}

export function formatWalPages(runs: PagesRun[]): string {
  const lines = runs.map(
    (run) =>
      `${run.label.padEnd(28)} ${run.withoutIndex.toFixed(3)} pages/commit without the tenant index, ${run.withIndex.toFixed(3)} with (+${((run.withIndex / run.withoutIndex - 1) * 100).toFixed(0)}%); verify: ${run.verifyViolations} violations`,
  );
  return [...lines, JSON.stringify(runs)].join('\n');
}
