/**
 * A rollout driver SIGKILLed in its own process on a SQLite file, and the next driver taking the
 * rollout over once the killed one's lease has run out:
 * - mid-hold: the second driver ends the hold from the store (store time, the step's
 *   completedAt) and advances once;
 * - mid-rollback: the first driver rolls back on a failing gate by itself and is killed between
 *   two chunks of the rollback's moves (a store with chunks of CHUNK scopes); the second resumes
 *   the moves and ends the rollback, every moved scope moved back exactly once.
 * The kill point is chosen by watching the store (the lease held and the step moved; the
 * rollback's cutover with some but not all of its scopes moved), not by a timer; a rollback that
 * ended before its kill landed is tried again on a fresh store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { readAudit } from '../cutover/cutover-helpers.js';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import type { DriverAction } from '../../src/rollout/driver.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { parseSqliteUrl } from '../../src/store/sqlite/sqlite-url.js';
import type { ScopeState } from '../../src/types.js';

const CHILD = new URL('./rollout-driver-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
const dir = mkdtempSync(join(tmpdir(), 'fg-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A driver process on the store at `url`; with `chunk`, its cutovers move that many scopes a chunk. */
function driverProcess(
  url: string,
  holder: string,
  chunk?: number,
): { child: ChildProcess; lines: string[] } {
  const args = [childBundle!.bundleOf(CHILD), url, holder];
  if (chunk !== undefined) args.push(String(chunk));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  child.stdout.on('data', (chunk: Buffer) =>
    lines.push(...chunk.toString().split('\n').filter(Boolean)),
  );
  return { child, lines };
}

/** Waits for `check`; fails after `withinMs` so a driver that never acts fails the test plainly. */
async function until(
  check: () => Promise<boolean>,
  what = 'the store',
  withinMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The actions a driver process printed. */
function actionsOf(lines: readonly string[]): DriverAction[] {
  return lines.filter((line) => line !== 'ready').map((line) => JSON.parse(line) as DriverAction);
}

describe('a rollout driver killed mid-hold', () => {
  const url = `sqlite:${join(dir, 'hold.db')}`;

  it('is replaced after its lease by the next driver, which ends the hold and advances once', async () => {
    const gate = await Fencegate.open({ store: url });
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    for (let i = 0; i < 20; i++) {
      const grant = await gate.acquire({
        scope: `wf-${i}`,
        holder: 'v7',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      await gate.release({ scope: `wf-${i}`, holder: 'v7', fence: grant.fence });
    }
    await gate.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [30, 100],
      holdSeconds: 4,
    });
    // The first driver starts once the step has moved: a look between the start's write and the
    // step's moves would rightly finish them (resume_moves), which is not the case under test.
    // Its first looks fall in the hold.
    const first = driverProcess(url, 'first');
    await until(
      async () => (await gate.store.readRolloutDriver('default', 'r'))?.holder === 'first',
    );
    expect((await gate.rollouts.get('r'))?.step).toBe(1);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    expect(actionsOf(first.lines)).toEqual([]);

    const second = driverProcess(url, 'second');
    try {
      await until(async () => (await gate.rollouts.get('r'))?.status === 'completed');
      expect(await gate.store.readRolloutDriver('default', 'r')).toMatchObject({
        holder: 'second',
        fence: 2,
      });
      expect(actionsOf(second.lines).map((action) => action.action)).toEqual(['advance']);
      const step = await gate.store.getCutover('default', 'r/step-1');
      const rollout = await gate.rollouts.get('r');
      // The hold ran its length in store time, from the step's end.
      expect(rollout!.updatedAt - step!.completedAt!).toBeGreaterThanOrEqual(4000);
    } finally {
      second.child.kill('SIGKILL');
      await once(second.child, 'exit');
      await gate.close();
    }
  }, 60_000);
});

/** Scopes on v7, about half moved by the step; the first driver moves them back CHUNK a chunk. */
const SCOPES = 60;
const CHUNK = 1;

interface RolledOut {
  gate: Fencegate;
  /** The scopes as the step left them: on v8 (moved) and on v7 (untouched). */
  moved: ScopeState[];
  untouched: ScopeState[];
}

/**
 * A store at `url` with SCOPES scopes on v7, rollout r's first step moved (about half of them on
 * v8), and failed v8 jobs on moved scopes: over the gate's max at a driver's first look.
 */
async function rolledOut(url: string): Promise<RolledOut> {
  // The setup's writes batched, and no durability on power loss: the setup costs a few syncs.
  const store = SqliteStore.open({
    path: parseSqliteUrl(url).path,
    groupCommit: true,
    synchronous: 'NORMAL',
  });
  const gate = await Fencegate.open({ store });
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
  await Promise.all(
    Array.from({ length: SCOPES }, async (_, i) => {
      const scope = `wf-${i}`;
      const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7', fence: grant.fence });
    }),
  );
  await gate.rollouts.start({
    rolloutId: 'r',
    fromPolicy: 'v7',
    toPolicy: 'v8',
    prefix: 'wf-',
    steps: [50, 100],
    holdSeconds: 60,
    gates: [{ name: 'jobs', metric: 'job_failure_ratio', minSamples: 3, max: 0.5 }],
  });
  const scopes = (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items;
  const moved = scopes.filter((scope) => scope.policyVersion === 'v8');
  await gate.recordJobEvents(
    moved.slice(0, 3).map((scope, i) => ({
      jobId: `v8-${i}`,
      scope: scope.scope,
      policyVersion: 'v8',
      fence: scope.fence,
      state: 'failed' as const,
      attempt: 1,
    })),
  );
  return { gate, moved, untouched: scopes.filter((scope) => scope.policyVersion === 'v7') };
}

/**
 * Starts the first driver with chunks of CHUNK scopes and SIGKILLs it once the rollback it started
 * has moved some of its scopes back (the store says so). Answers its printed lines and how many
 * scopes the rollback had moved once it was dead.
 */
async function killedMidRollback(
  gate: Fencegate,
  url: string,
): Promise<{ lines: string[]; movedBack: number }> {
  const first = driverProcess(url, 'first', CHUNK);
  const deadline = Date.now() + 10_000;
  try {
    for (;;) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the rollback to start');
      const back = await gate.store.getCutover(gate.tenant, 'r/rollback');
      if (back !== null && (back.fences.length > 0 || back.status === 'completed')) break;
      if (first.child.exitCode !== null) throw new Error('the first driver exited by itself');
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    const exited = first.child.exitCode !== null || first.child.signalCode !== null;
    if (!exited) {
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');
    }
  }
  const back = await gate.store.getCutover(gate.tenant, 'r/rollback');
  return { lines: first.lines, movedBack: back!.fences.length };
}

describe('a rollout driver killed mid-rollback', () => {
  it('is replaced after its lease by the next driver, which resumes the moves and ends the rollback', async () => {
    // A rollback that ended before the kill landed proves nothing: try again on a fresh store.
    for (let attempt = 0; ; attempt++) {
      const url = `sqlite:${join(dir, `rollback-${attempt}.db`)}`;
      const { gate, moved, untouched } = await rolledOut(url);
      let second: ChildProcess | undefined;
      try {
        // Enough chunks of the rollback for a kill to land between two of them.
        expect(moved.length).toBeGreaterThan(8 * CHUNK);
        expect(untouched.length).toBeGreaterThan(0);
        const first = await killedMidRollback(gate, url);
        if (first.movedBack === moved.length && attempt < 2) continue;
        // Killed mid-rollback: some scopes back on v7, not all; the rollback started by itself.
        expect(first.movedBack).toBeGreaterThan(0);
        expect(first.movedBack).toBeLessThan(moved.length);
        expect(await gate.rollouts.get('r')).toMatchObject({ status: 'rolling_back' });
        const started = actionsOf(first.lines);
        expect(started.map((action) => action.action)).toEqual(['rollback']);
        expect(started[0]?.reason).toMatch(/^gate jobs failed at step 1: value 1 of 3 samples/);

        const next = driverProcess(url, 'second');
        second = next.child;
        await until(
          async () => (await gate.rollouts.get('r'))?.status === 'rolled_back',
          'the second driver to end the rollback',
          10_000,
        );
        expect(await gate.store.readRolloutDriver(gate.tenant, 'r')).toMatchObject({
          holder: 'second',
          fence: 2,
        });
        expect(actionsOf(next.lines).map((action) => action.action)).toEqual(['resume_moves']);
        await rolledBack(gate, moved, untouched);
        return;
      } finally {
        second?.kill('SIGKILL');
        if (second !== undefined) await once(second, 'exit');
        await gate.close();
      }
    }
  }, 60_000);
});

/**
 * Every moved scope back on v7 at the rollback's fence, moved back exactly once (one audit entry
 * of the rollback each); the scopes the step never moved as they were; the audit chain sound.
 */
async function rolledBack(
  gate: Fencegate,
  moved: readonly ScopeState[],
  untouched: readonly ScopeState[],
): Promise<void> {
  const names = moved.map((scope) => scope.scope).sort();
  const rollback = await gate.store.getCutover(gate.tenant, 'r/rollback');
  expect(rollback).toMatchObject({ status: 'completed', planned: moved.length });
  const fenceOf = new Map(rollback!.fences.map((entry) => [entry.scope, entry.fence]));
  expect([...fenceOf.keys()].sort()).toEqual(names);
  const after = new Map(
    (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items.map((s) => [s.scope, s]),
  );
  for (const scope of moved) {
    expect(fenceOf.get(scope.scope)).toBe(scope.fence + 1);
    expect(after.get(scope.scope)).toMatchObject({
      policyVersion: 'v7',
      fence: fenceOf.get(scope.scope),
    });
  }
  const backMoves = new Map<string, number>();
  for (const entry of await readAudit(gate, { kind: 'cutover' })) {
    if (entry.reason !== 'r/rollback' || entry.scope === null) continue;
    backMoves.set(entry.scope, (backMoves.get(entry.scope) ?? 0) + 1);
  }
  expect([...backMoves.keys()].sort()).toEqual(names);
  expect([...backMoves.values()].every((n) => n === 1)).toBe(true);
  for (const scope of untouched) expect(after.get(scope.scope)).toEqual(scope);
  expect((await verifyStore(gate.store, { tenant: gate.tenant })).ok).toBe(true);
}
