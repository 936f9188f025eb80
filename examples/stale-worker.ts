/**
 * A paused worker wakes up after its replacement took over, and tries to commit an obsolete
 * decision. The store rejects it at the commit boundary; the replacement's write stands.
 *
 *   npx tsx examples/stale-worker.ts
 */
import { Fencegate } from 'fencegate';

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const scope = 'wf-123/memory';

// Worker A (policy v7) acquires the workflow's memory and reads it.
const a = await gate.acquire({ scope, holder: 'worker-a', ttlMs: 30_000 });
const readByA = await gate.getRecord(scope, 'summary');

// A pauses. An operator hands the scope to worker B, which commits a new summary.
const b = await gate.takeover(scope, { holder: 'worker-b', ttlMs: 30_000, reason: 'A timed out' });
const readByB = await gate.getRecord(scope, 'summary');
const byB = await gate.commit({
  scope,
  fence: b.fence,
  operationId: 'compact-wf-123-b',
  writes: [{ name: 'summary', expectRevision: readByB.revision, value: { facts: ['handoff'] } }],
});

// A wakes up and tries to commit what it decided before the takeover.
const byA = await gate.commit({
  scope,
  fence: a.fence,
  operationId: 'compact-wf-123-a',
  writes: [{ name: 'summary', expectRevision: readByA.revision, value: { facts: [] } }],
});

const summary = await gate.getRecord(scope, 'summary');
console.log(`worker B: ${byB.outcome} at fence ${b.fence}`);
console.log(
  `worker A: ${byA.outcome}${byA.outcome === 'rejected' ? ` (${byA.error.code}: ${byA.error.message})` : ''}`,
);
console.log(`summary: ${JSON.stringify(summary.value)} at revision ${summary.revision}`);
await gate.close();

if (byB.outcome !== 'committed' || byA.outcome !== 'rejected') process.exitCode = 1;
