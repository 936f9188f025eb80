/**
 * An operator's cancel of one scope holding many pending intents, on SQLite: the fence step and
 * every page of the scope's intents (core/cancel-intents-page.ts), timed from the call to its
 * answer. Then `verify` replays the file's history; any violation fails the run once every count
 * is printed. Run: `npx tsx bench/cancel-scope.ts [count…]` (default 6400 25600).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Fencegate } from '../src/gate.js';
import { MAX_BATCH_COMMITS } from '../src/core/limits.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { requireClean, violationsIn } from './verified-history.js';

const PER_COMMIT = 16;

async function run(count: number): Promise<{ ms: number; verifyViolations: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-cancel-'));
  const gate = await Fencegate.open({ store: SqliteStore.open({ path: join(dir, 'bench.db') }) });
  try {
    const scope = 'wf-cancel';
    const grant = await gate.acquire({ scope, holder: 'w1', ttlMs: 600_000 });
    const commits = [];
    for (let start = 0; start < count; start += PER_COMMIT) {
      commits.push({
        scope,
        fence: grant.fence,
        operationId: `op-${start}`,
        intents: Array.from({ length: Math.min(PER_COMMIT, count - start) }, (_, i) => ({
          effectKey: `e-${String(start + i).padStart(7, '0')}`,
          target: 'mail',
          payload: { n: start + i },
        })),
      });
    }
    for (let start = 0; start < commits.length; start += MAX_BATCH_COMMITS) {
      await gate.commitMany(commits.slice(start, start + MAX_BATCH_COMMITS));
    }
    const began = performance.now();
    const result = await gate.cancel(scope, { reason: 'bench' });
    const ms = performance.now() - began;
    if (result.cancelledIntents !== count) {
      throw new Error(`cancelled ${result.cancelledIntents} of ${count} intents`);
    }
    return { ms, verifyViolations: await violationsIn(gate.store) };
  } finally {
    await gate.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const counts = process.argv.slice(2).map(Number);
let violations = 0;
for (const count of counts.length > 0 ? counts : [6_400, 25_600]) {
  const { ms, verifyViolations } = await run(count);
  violations += verifyViolations;
  console.log(
    `cancel of ${count} intents on SQLite: ${ms.toFixed(0)} ms; verify after the run: ${verifyViolations} violations`,
  );
  console.log(
    JSON.stringify({ bench: 'cancel-scope', count, ms: Math.round(ms), verifyViolations }),
  );
}
requireClean('cancel-scope', violations);
