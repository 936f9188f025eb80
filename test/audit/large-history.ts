/**
 * A large, valid audit history in a SQLite store file, written in batches straight into its audit
 * table (as the store lays entries out), after a real cutover of tenant-0: replaying it is what
 * verify and a cutover's report do, and what must not hold up the server's other requests.
 */
import Database from 'better-sqlite3';
import { generateHistory } from '../../src/audit/synthetic-history.js';
import { Fencegate } from '../../src/gate.js';
import { recordsColumn } from '../../src/store/sqlite/sqlite-audit-row.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

export const LARGE_TENANT = 'tenant-0';
export const LARGE_CUTOVER = 'cutover-before-history';

/** Writes `entries` synthetic entries (two tenants) after one cutover; returns the last seq. */
export async function writeLargeHistory(path: string, entries: number): Promise<number> {
  const store = SqliteStore.open({ path });
  const gate = await Fencegate.open({ store, tenant: LARGE_TENANT });
  await gate.registerPolicy({ version: 'v2' });
  await gate.acquire({ scope: 'moved/scope', holder: 'old-worker', ttlMs: 60_000 });
  await gate.cutover({
    cutoverId: LARGE_CUTOVER,
    toPolicy: 'v2',
    holder: 'controller',
    scopes: ['moved/scope'],
  });
  const start = (await store.readAudit(undefined, { limit: 1000 })).items.at(-1)?.seq ?? 0;
  await gate.close();

  const db = new Database(path);
  const insert = db.prepare(
    `INSERT INTO audit (seq, at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder,
       policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const history = generateHistory({ entries, scopes: 2000, tenants: 2, seed: 7 });
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const e = history[i]!;
      insert.run(
        start + e.seq,
        e.at,
        e.tenant,
        e.scope,
        e.kind,
        e.outcome,
        e.reason,
        e.taskId,
        e.operationId,
        e.holder,
        e.policyVersion,
        e.fence,
        e.currentFence,
        e.leaseExpiresAt,
        recordsColumn(e.records),
        e.effectKey,
        e.reads === null ? null : JSON.stringify(e.reads),
      );
    }
  });
  for (let i = 0; i < history.length; i += 20_000) batch(i, Math.min(i + 20_000, history.length));
  db.close();
  return start + history.length;
}
