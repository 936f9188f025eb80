import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import type { AuditEntry } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const dir = tempDir();
afterAll(() => dir.cleanup());

async function readWholeAudit(gate: Fencegate): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await gate.store.readAudit(undefined, { afterSeq, limit: 1000 });
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

describe('two OS processes on one SQLite file', () => {
  it('race on the same scopes without a stale commit or a lost update', async () => {
    const path = join(dir.path, 'race.db');
    const worker = new URL('./race-worker.ts', import.meta.url).pathname;
    // Create the schema first so both processes open a migrated file.
    await (await Fencegate.open({ store: `sqlite:${path}` })).close();
    const results = await Promise.all(
      ['p1', 'p2'].map((id) =>
        run(process.execPath, ['--import', 'tsx', worker, path, id, '1500', '4'], {
          timeout: 60_000,
        }),
      ),
    );
    const reports = results.map(
      (r) => JSON.parse(r.stdout) as { committed: number; staleAttempts: number },
    );
    expect(reports.every((r) => r.committed > 0)).toBe(true);
    expect(reports.reduce((n, r) => n + r.staleAttempts, 0)).toBeGreaterThan(0);

    const gate = await Fencegate.open({ store: `sqlite:${path}` });
    const audit = await readWholeAudit(gate);
    const fence = new Map<string, number>();
    const committedPerScope = new Map<string, number>();
    let lastSeq = 0;
    for (const entry of audit) {
      expect(entry.seq).toBeGreaterThan(lastSeq);
      lastSeq = entry.seq;
      const scope = entry.scope ?? '';
      if (entry.outcome === 'granted') {
        expect(entry.currentFence).toBeGreaterThan(fence.get(scope) ?? 0);
        fence.set(scope, entry.currentFence ?? 0);
      }
      if (entry.kind === 'commit' && entry.outcome === 'committed') {
        // Accepted only under the then-current fence, and on the record's previous revision.
        expect(entry.fence).toBe(fence.get(scope));
        const change = entry.records?.[0];
        expect(change?.expected).toBe(committedPerScope.get(scope) ?? 0);
        committedPerScope.set(scope, (committedPerScope.get(scope) ?? 0) + 1);
      }
    }
    const totalCommitted = reports.reduce((n, r) => n + r.committed, 0);
    let counted = 0;
    for (const [scope, commits] of committedPerScope) {
      const record = await gate.getRecord(scope, 'counter');
      // No lost update: every accepted increment is in the value, and no stale value (-1) landed.
      expect(record.value).toEqual({ count: commits });
      expect(record.revision).toBe(commits);
      counted += commits;
    }
    expect(counted).toBe(totalCommitted);
    const staleAccepted = audit.filter(
      (e) => e.kind === 'commit' && e.outcome === 'committed' && e.operationId?.endsWith('-stale'),
    );
    expect(staleAccepted).toEqual([]);
    const verified = await verifyStore(gate.store);
    expect(verified.violations).toEqual([]);
    expect(verified.checked).toBe(audit.length);
    await gate.close();
  });
});
