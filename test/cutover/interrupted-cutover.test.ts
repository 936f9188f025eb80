/**
 * A cutover killed with SIGKILL part way through, in another process, then resumed under the same
 * cutoverId: the result must equal an uninterrupted cutover of an identical store, with every
 * scope bumped exactly once. The kill point is chosen by watching the store (the audit log shows
 * some but not all cutover entries), not by a timer.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { systemClock } from '../../src/core/clock.js';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { CutoverRequest, ScopeState } from '../../src/types.js';
import {
  countBy,
  HOUR,
  readAudit,
  registerPolicies,
  scopeName,
  testDir,
} from './cutover-helpers.js';

const SCOPES = 5000;
const CUTOVER_ID = 'resumable-v8';
const REQUEST: CutoverRequest = {
  cutoverId: CUTOVER_ID,
  toPolicy: 'v8',
  holder: 'controller-v8',
  scopes: Array.from({ length: SCOPES }, (_, i) => scopeName(i)),
};
const CHILD = new URL('./interrupted-cutover-child.ts', import.meta.url).pathname;

const dir = testDir();
afterAll(() => dir.cleanup());

/** Both stores run on the host clock: the child process and this one share store time. */
function open(path: string): Promise<Fencegate> {
  return Fencegate.open({
    store: SqliteStore.open({ path, clock: systemClock, groupCommit: true }),
  });
}

/** SCOPES scopes pinned to v7, each held by a v7 worker at fence 1. */
async function prepare(path: string): Promise<void> {
  const gate = await open(path);
  await registerPolicies(gate);
  for (let i = 0; i < SCOPES; i++) {
    await gate.acquire({
      scope: scopeName(i),
      holder: `v7-w${i % 16}`,
      ttlMs: HOUR,
      policyVersion: 'v7',
    });
  }
  await gate.close();
}

/**
 * Starts the cutover in a child process and kills it as soon as the audit log shows a first
 * cutover entry. Returns how many cutover entries the file holds once the child is dead.
 */
async function cutoverKilledMidway(path: string): Promise<number> {
  const watcher = new Database(path, { readonly: true });
  const moved = watcher.prepare("SELECT COUNT(*) AS n FROM audit WHERE kind = 'cutover'");
  const count = (): number => (moved.get() as { n: number }).n;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, path, CUTOVER_ID, String(SCOPES)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit');
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    while (child.exitCode === null && child.signalCode === null) {
      if (count() > 0) {
        child.kill('SIGKILL');
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [code, signal] = (await exited) as [number | null, string | null];
    if (signal !== 'SIGKILL' && code !== 0) throw new Error(`cutover child failed: ${stderr}`);
    return count();
  } finally {
    watcher.close();
  }
}

function authority(scope: ScopeState) {
  return {
    scope: scope.scope,
    fence: scope.fence,
    holder: scope.holder,
    policyVersion: scope.policyVersion,
    leaseExpiresAt: scope.leaseExpiresAt,
    status: scope.status,
  };
}

async function allScopes(gate: Fencegate): Promise<ReturnType<typeof authority>[]> {
  const scopes: ReturnType<typeof authority>[] = [];
  let cursor: string | undefined;
  do {
    const page = await gate.listScopes({
      prefix: 'wf-',
      limit: 1000,
      ...(cursor === undefined ? {} : { cursor }),
    });
    scopes.push(...page.items.map(authority));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return scopes;
}

describe('an interrupted cutover', () => {
  it('killed with SIGKILL mid-way, resumes under its cutoverId to the uninterrupted result', async () => {
    // A cutover that finishes before the kill lands proves nothing; try again on a fresh store.
    let path = '';
    let movedAtKill = SCOPES;
    for (let attempt = 0; attempt < 5 && movedAtKill === SCOPES; attempt++) {
      path = dir.file(`interrupted-${attempt}.db`);
      await prepare(path);
      movedAtKill = await cutoverKilledMidway(path);
    }
    expect(movedAtKill).toBeGreaterThan(0);
    expect(movedAtKill).toBeLessThan(SCOPES);

    const gate = await open(path);
    const store = gate.store as SqliteStore;
    // The crash left a consistent prefix: each moved scope has its bump, its progress mark and its
    // audit entry, and nothing else moved.
    const partial = await store.getCutover(gate.tenant, CUTOVER_ID);
    expect(partial).toMatchObject({ status: 'running', planned: SCOPES });
    expect(partial?.fences).toHaveLength(movedAtKill);
    const before = await allScopes(gate);
    expect(before.filter((s) => s.fence === 2 && s.holder === 'controller-v8')).toHaveLength(
      movedAtKill,
    );
    expect(before.filter((s) => s.fence === 1 && s.policyVersion === 'v7')).toHaveLength(
      SCOPES - movedAtKill,
    );
    expect(await gate.cutoverReport(CUTOVER_ID)).toMatchObject({
      status: 'running',
      scopes: SCOPES,
    });

    const resumed = await gate.cutover(REQUEST);

    const referencePath = dir.file('reference.db');
    await prepare(referencePath);
    const reference = await open(referencePath);
    const uninterrupted = await reference.cutover(REQUEST);

    expect(resumed.scopes).toBe(SCOPES);
    expect(resumed.fences).toEqual(uninterrupted.fences);
    expect(await allScopes(gate)).toEqual(await allScopes(reference));
    const perScope = countBy(
      (await readAudit(gate, { kind: 'cutover' })).filter((e) => e.reason === CUTOVER_ID),
      (e) => e.scope ?? '',
    );
    expect(perScope.size).toBe(SCOPES);
    expect([...perScope.values()].every((n) => n === 1)).toBe(true);
    expect(await gate.cutoverReport(CUTOVER_ID)).toMatchObject({
      status: 'completed',
      scopes: SCOPES,
      staleAccepted: 0,
    });
    expect((await verifyStore(gate.store, { tenant: gate.tenant })).ok).toBe(true);
    await gate.close();
    await reference.close();
  });
});
