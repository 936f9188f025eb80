/**
 * Testing your own agent worker with fencegate/testing: the worker below is paused at the worst
 * moments on purpose (after it read, while its lease runs out, when the store's reply is lost),
 * and each check inspects the store, not what the worker logged. No sleeps decide the order.
 *
 *   npx tsx examples/testing-a-worker.ts
 */
import {
  Fencegate,
  isFencegateError,
  openStore,
  type CommitResult,
  type FencegateApi,
} from 'fencegate';
import { ManualClock, NO_PAUSE, PausePoints, faultyStore } from 'fencegate/testing';

type Pause = Pick<PausePoints, 'reach'>;

/** The worker under test: compacts a workflow's memory, keeping every handoff fact. */
async function compactMemory(
  gate: FencegateApi,
  job: { scope: string; holder: string; operationId: string },
  pause: Pause = NO_PAUSE,
): Promise<CommitResult> {
  const grant = await gate.acquire({ scope: job.scope, holder: job.holder, ttlMs: 30_000 });
  const memory = await gate.getRecord(job.scope, 'memory');
  const facts = memory.exists ? (memory.value as { facts: string[] }).facts : [];
  await pause.reach('after-read'); // the model thinks here, for minutes
  const request = {
    scope: job.scope,
    fence: grant.fence,
    operationId: job.operationId,
    writes: [
      {
        name: 'memory',
        expectRevision: memory.revision,
        value: { facts, summary: `${facts.length} facts, compacted by ${job.holder}` },
      },
    ],
  };
  try {
    return await gate.commit(request);
  } catch (error) {
    // A lost reply is an unknown outcome: read the authoritative one, never guess.
    if (!isFencegateError(error) || error.code !== 'outcome_unknown') throw error;
    return (await gate.getOperation(job.operationId)) ?? gate.commit(request);
  }
}

const checks: { name: string; ok: boolean; detail: string }[] = [];
function check(name: string, ok: boolean, detail: string): void {
  checks.push({ name, ok, detail });
}

const scope = 'wf-7/memory';

async function freshGate(clock: ManualClock, store?: Awaited<ReturnType<typeof openStore>>) {
  const gate = await Fencegate.open({
    store: store ?? (await openStore('sqlite::memory:', { clock })),
  });
  const setup = await gate.takeover(scope, { holder: 'setup' });
  await gate.commit({
    scope,
    fence: setup.fence,
    operationId: 'seed',
    writes: [
      { name: 'memory', expectRevision: 0, value: { facts: ['customer-id', 'open-ticket'] } },
    ],
  });
  await gate.release({ scope, holder: 'setup', fence: setup.fence });
  return gate;
}

// 1. Paused after reading; a replacement takes over and commits; the paused worker wakes up.
{
  const clock = new ManualClock();
  const gate = await freshGate(clock);
  const points = new PausePoints();
  const stale = compactMemory(gate, { scope, holder: 'worker-a', operationId: 'a-1' }, points);
  await points.waitUntilReached('after-read', stale);
  await gate.takeover(scope, { holder: 'worker-b', ttlMs: 30_000 });
  const replacement = await compactMemory(gate, { scope, holder: 'worker-b', operationId: 'b-1' });
  points.release('after-read');
  const late = await stale;
  const memory = await gate.getRecord(scope, 'memory');
  check(
    'a worker paused across a takeover cannot commit',
    replacement.outcome === 'committed' &&
      late.outcome === 'rejected' &&
      late.error.code === 'stale_fence' &&
      (memory.value as { summary: string }).summary.endsWith('worker-b'),
    `replacement ${replacement.outcome}, paused worker ${late.outcome === 'rejected' ? late.error.code : late.outcome}`,
  );
  await gate.close();
}

// 2. Paused while its lease runs out; nobody took over yet.
{
  const clock = new ManualClock();
  const gate = await freshGate(clock);
  const points = new PausePoints();
  const slow = compactMemory(gate, { scope, holder: 'worker-a', operationId: 'a-1' }, points);
  await points.waitUntilReached('after-read', slow);
  clock.advance(30_000);
  points.release('after-read');
  const result = await slow;
  const memory = await gate.getRecord(scope, 'memory');
  check(
    'a worker whose lease expired while it thought cannot commit',
    result.outcome === 'rejected' && result.error.code === 'lease_expired' && memory.revision === 1,
    `outcome ${result.outcome === 'rejected' ? result.error.code : result.outcome}, memory at revision ${memory.revision}`,
  );
  await gate.close();
}

// 3. The store commits but the reply is lost: the worker resolves it, the write lands once.
{
  const clock = new ManualClock();
  const store = faultyStore(await openStore('sqlite::memory:', { clock }));
  const gate = await freshGate(clock, store);
  store.inject({ method: 'commit', fault: 'lose-reply' });
  const result = await compactMemory(gate, { scope, holder: 'worker-a', operationId: 'a-1' });
  const memory = await gate.getRecord(scope, 'memory');
  const audit = await gate.audit({ kind: 'commit', outcome: 'committed' });
  const commits = audit.items.filter((entry) => entry.operationId === 'a-1').length;
  check(
    'a lost reply is resolved through the stored outcome, and the write applies once',
    result.outcome === 'committed' && memory.revision === 2 && commits === 1,
    `outcome ${result.outcome}, memory at revision ${memory.revision}, ${commits} audited commit`,
  );
  await gate.close();
}

for (const { name, ok, detail } of checks)
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name} (${detail})`);
if (checks.some((c) => !c.ok)) process.exitCode = 1;
