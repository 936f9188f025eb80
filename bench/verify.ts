/**
 * Benchmark of the history checker: generates a valid synthetic audit history in memory and times
 * verifyHistory over it. Target: at least 1,000,000 entries per minute on 2 cores.
 *
 * With --sqlite it also writes the history into a fresh SQLite store file and times verifyStore,
 * which reads the audit log back page by page: the path `fencegate verify` takes.
 *
 *   npx tsx bench/verify.ts [--entries 1000000] [--scopes 5000] [--runs 3] [--sqlite] [--json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { generateHistory } from '../src/audit/synthetic-history.js';
import { verifyHistory, verifyStore } from '../src/audit/verify.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { AuditEntry } from '../src/types.js';

const TARGET_PER_SECOND = 1_000_000 / 60;

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    scopes: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '3' },
    sqlite: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const entries = Number(values.entries);
const scopes = Number(values.scopes);
const runs = Number(values.runs);

const generatedAt = performance.now();
const history = generateHistory({ entries, scopes, tenants: 2, seed: 42 });
const generateMs = performance.now() - generatedAt;

const timings: number[] = [];
let last: ReturnType<typeof verifyHistory> | undefined;
for (let run = 0; run < runs; run++) {
  const start = performance.now();
  last = verifyHistory(history);
  timings.push(performance.now() - start);
}
const { checked, violationCount } = last!;
if (violationCount !== 0) {
  throw new Error(
    `the synthetic history should be valid; verify found ${violationCount} violations`,
  );
}

// The state a later run continues from, as it would be saved.
const checkpointStart = performance.now();
const checkpointJson = JSON.stringify(last!.checkpoint);
const checkpointMs = performance.now() - checkpointStart;

/** Writes the entries as the SQLite adapter stores them, then times one verifyStore over the file. */
async function timeSqlite(
  history: AuditEntry[],
): Promise<{ loadMs: number; verifyMs: number; checked: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-verify-'));
  try {
    const path = join(dir, 'verify.db');
    await SqliteStore.open({ path }).close(); // creates the schema
    const loadStart = performance.now();
    const db = new Database(path);
    const insert = db.prepare(
      `INSERT INTO audit (seq, at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder,
         policy_version, fence, current_fence, lease_expires_at, records, effect_key)
       VALUES (@seq, @at, @tenant, @scope, @kind, @outcome, @reason, @taskId, @operationId, @holder,
         @policyVersion, @fence, @currentFence, @leaseExpiresAt, @records, @effectKey)`,
    );
    db.transaction(() => {
      for (const entry of history) {
        insert.run({
          ...entry,
          records: entry.records === null ? null : JSON.stringify(entry.records),
        });
      }
    })();
    db.close();
    const loadMs = performance.now() - loadStart;
    const store = SqliteStore.open({ path });
    try {
      const start = performance.now();
      const result = await verifyStore(store);
      const verifyMs = performance.now() - start;
      if (result.violationCount !== 0)
        throw new Error(`verifyStore found ${result.violationCount} violations`);
      return { loadMs, verifyMs, checked: result.checked };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sqlite = values.sqlite ? await timeSqlite(history) : null;
const sqlitePerSecond =
  sqlite === null ? null : Math.round(sqlite.checked / (sqlite.verifyMs / 1000));

const best = Math.min(...timings);
const median = [...timings].sort((a, b) => a - b)[Math.floor(timings.length / 2)]!;
const perSecond = Math.round(checked / (median / 1000));
const report = {
  entries: checked,
  scopes: scopes * 2,
  runs,
  generateMs: Math.round(generateMs),
  bestMs: Math.round(best),
  medianMs: Math.round(median),
  entriesPerSecond: perSecond,
  entriesPerMinute: perSecond * 60,
  targetPerMinute: 1_000_000,
  meetsTarget:
    perSecond >= TARGET_PER_SECOND &&
    (sqlitePerSecond === null || sqlitePerSecond >= TARGET_PER_SECOND),
  sqliteVerifyStoreMs: sqlite === null ? null : Math.round(sqlite.verifyMs),
  sqliteEntriesPerSecond: sqlitePerSecond,
  checkpointBytes: checkpointJson.length,
  checkpointMs: Math.round(checkpointMs),
};

if (values.json) {
  process.stdout.write(`${JSON.stringify(report)}\n`);
} else {
  process.stdout.write(
    [
      `verify benchmark: ${checked.toLocaleString('en-US')} audit entries over ${report.scopes} scopes (generated in ${report.generateMs} ms)`,
      `  verifyHistory: median ${report.medianMs} ms, best ${report.bestMs} ms of ${runs} runs`,
      `  throughput:    ${perSecond.toLocaleString('en-US')} entries/s = ${(perSecond * 60).toLocaleString('en-US')} entries/min (target 1,000,000/min: ${report.meetsTarget ? 'met' : 'NOT met'})`,
      `  checkpoint:    ${report.checkpointBytes.toLocaleString('en-US')} bytes of JSON after the whole history (serialized in ${report.checkpointMs} ms)`,
      ...(sqlite === null || sqlitePerSecond === null
        ? []
        : [
            `  verifyStore on SQLite: ${Math.round(sqlite.verifyMs)} ms = ${sqlitePerSecond.toLocaleString('en-US')} entries/s = ${(sqlitePerSecond * 60).toLocaleString('en-US')} entries/min (file loaded in ${Math.round(sqlite.loadMs)} ms)`,
          ]),
      '',
    ].join('\n'),
  );
}
if (!report.meetsTarget) process.exitCode = 1;
