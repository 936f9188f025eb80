/**
 * One racing process: acquires, reads, increments and commits records on shared scopes, takes
 * scopes over now and then, and replays commits with fences it knows are stale. Run by
 * multi-process.test.ts against one SQLite file.
 */
import { Fencegate } from '../../src/gate.js';
import { isFencegateError } from '../../src/errors.js';

const [path, workerId, roundsText, scopesText] = process.argv.slice(2);
const rounds = Number(roundsText);
const scopes = Number(scopesText);
// The race is about locks, not durability: syncing every transaction would only slow it down.
const gate = await Fencegate.open({ store: `sqlite:${path}?synchronous=normal` });
const staleFences = new Map<string, number>();
let committed = 0;
let staleAttempts = 0;

for (let i = 0; i < rounds; i++) {
  const scope = `race-${i % scopes}`;
  const holder = `${workerId}`;
  let fence: number;
  try {
    fence =
      i % 7 === 0
        ? (await gate.takeover(scope, { holder, ttlMs: 200 })).fence
        : (await gate.acquire({ scope, holder, ttlMs: 200 })).fence;
  } catch (error) {
    if (isFencegateError(error) && error.code === 'lease_held') continue;
    throw error;
  }
  const record = await gate.getRecord(scope, 'counter');
  const count = record.exists ? (record.value as { count: number }).count : 0;
  const result = await gate.commit({
    scope,
    fence,
    operationId: `${workerId}-${i}`,
    writes: [{ name: 'counter', expectRevision: record.revision, value: { count: count + 1 } }],
  });
  if (result.outcome === 'committed') committed++;
  const old = staleFences.get(scope);
  if (old !== undefined && old < fence) {
    staleAttempts++;
    await gate.commit({
      scope,
      fence: old,
      operationId: `${workerId}-${i}-stale`,
      writes: [{ name: 'counter', expectRevision: record.revision + 1, value: { count: -1 } }],
    });
  }
  staleFences.set(scope, fence);
  if (i % 3 === 0) await gate.release({ scope, holder, fence }).catch(() => undefined);
}
await gate.close();
process.stdout.write(JSON.stringify({ committed, staleAttempts }));
