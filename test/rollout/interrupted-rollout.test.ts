/**
 * A rollout step and then its rollback, each killed with SIGKILL part way through in another
 * process on every store, and resumed by sending the command again: every scope moves once in the
 * step and once back in the rollback, to the state of an uninterrupted run. The step is killed
 * twice: first while its list is half built (some pages listed, none moved), then, sent again,
 * while it moves. The kill point is chosen by watching the store (the step's list has names, the
 * audit log shows some cutover entries), not by a timer; the child pauses between its pages and
 * chunks so that the kill lands between two.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { verifyStore } from '../../src/audit/verify.js';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import type { ScopeState } from '../../src/types.js';
import {
  AREA_STORES,
  storesFor,
  type StoreFactory,
  type TestStoreKind,
} from '../helpers/stores.js';
import { HOUR, readAudit, registerPolicies } from '../cutover/cutover-helpers.js';
import { CHUNK } from '../cutover/chunked-store.js';
import { ROLLOUT, scopeName } from './rollout-fixture.js';

const CHILD = new URL('./interrupted-rollout-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
const ROLLOUT_ID = ROLLOUT.rolloutId!;

/**
 * Enough scopes for several pages of a step's list and several chunks of a step or the rollback,
 * so a kill lands between two of them: CHUNK scopes each here (on etcd at most what one Txn holds,
 * 31 with its default --max-txn-ops).
 */
function scopesOn(kind: TestStoreKind): number {
  return kind.name.startsWith('etcd') ? 120 : 6 * CHUNK;
}

/** A fresh store with `scopes` scopes on v7, released at fence 1. */
async function prepare(
  stores: StoreFactory,
  scopes: number,
): Promise<{ gate: Fencegate; url: string }> {
  const { store, url } = await stores.open({ groupCommit: true, cutoverChunk: CHUNK });
  const gate = await Fencegate.open({ store });
  await registerPolicies(gate);
  for (let start = 0; start < scopes; start += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, scopes - start) }, (_, k) => start + k).map(async (i) => {
        const scope = scopeName(i);
        const grant = await gate.acquire({
          scope,
          holder: 'v7-w',
          ttlMs: HOUR,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'v7-w', fence: grant.fence });
      }),
    );
  }
  return { gate, url };
}

/**
 * Runs the command in a child process and kills it once the store holds more cutover entries than
 * `before`. Returns how many it holds once the child is dead.
 */
function killedMidway(
  kind: TestStoreKind,
  url: string,
  command: 'start' | 'rollback',
  before: number,
): Promise<number> {
  return killedWhen(kind, url, command, async (entries) => (await entries()) > before);
}

/**
 * Runs the command in a child process and kills it once `reached` holds of the store (it is given
 * the count of cutover entries). Returns how many cutover entries the store holds once the child
 * is dead.
 */
async function killedWhen(
  kind: TestStoreKind,
  url: string,
  command: 'start' | 'rollback',
  reached: (entries: () => Promise<number>) => Promise<boolean>,
): Promise<number> {
  const watcher = await kind.behind.watchCutover(url);
  const child = spawn(process.execPath, [childBundle!.bundleOf(CHILD), watcher.childUrl, command], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    while (child.exitCode === null && child.signalCode === null) {
      if (await reached(() => watcher.cutoverEntries())) {
        child.kill('SIGKILL');
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [code, signal] = (await exited) as [number | null, string | null];
    if (signal !== 'SIGKILL' && code !== 0) throw new Error(`rollout child failed: ${stderr}`);
    await watcher.childGone();
    return await watcher.cutoverEntries();
  } finally {
    await watcher.close();
  }
}

async function allScopes(gate: Fencegate): Promise<ScopeState[]> {
  const scopes: ScopeState[] = [];
  let cursor: string | undefined;
  do {
    const page = await gate.listScopes({
      prefix: 'wf-',
      limit: 1000,
      ...(cursor === undefined ? {} : { cursor }),
    });
    scopes.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return scopes;
}

/** How many cutover entries each scope has under `cutoverId`. */
async function movesPerScope(gate: Fencegate, cutoverId: string): Promise<number[]> {
  const counts = new Map<string, number>();
  for (const entry of await readAudit(gate, { kind: 'cutover' })) {
    if (entry.reason !== cutoverId || entry.scope === null) continue;
    counts.set(entry.scope, (counts.get(entry.scope) ?? 0) + 1);
  }
  return [...counts.values()];
}

describe.each(AREA_STORES)('an interrupted rollout on $name', (kind) => {
  const stores = storesFor(kind, 'rollout_interrupted');
  const scopes = scopesOn(kind);
  const ramped = Array.from({ length: scopes }, (_, i) => scopeName(i)).filter((scope) =>
    admits(ROLLOUT_ID, scope, 90),
  );
  it('a step and a rollback killed with SIGKILL resume when sent again, and nothing moves twice', async () => {
    // A command that finishes before the kill lands proves nothing; try again on a fresh store.
    for (let attempt = 0; ; attempt++) {
      const { gate, url } = await prepare(stores, scopes);
      try {
        // Killed once the step's list has names, before it lists them all.
        const step = `${ROLLOUT_ID}/step-1`;
        const listed = async () => (await gate.store.getCutover(gate.tenant, step))?.planned ?? 0;
        expect(await killedWhen(kind, url, 'start', async () => (await listed()) > 0)).toBe(0);
        const half = await gate.store.getCutover(gate.tenant, step);
        if (half!.planned === ramped.length && attempt < 4) continue;
        expect(half).toMatchObject({ status: 'running', fences: [], skipped: [] });
        expect(half!.planned).toBeGreaterThan(0);
        expect(half!.planned).toBeLessThan(ramped.length);
        // Sent again, it lists the rest and moves; killed part way through the moves.
        const movedAtKill = await killedMidway(kind, url, 'start', 0);
        if (movedAtKill === ramped.length && attempt < 4) continue;
        expect(movedAtKill).toBeGreaterThan(0);
        expect(movedAtKill).toBeLessThan(ramped.length);
        expect(await gate.rollouts.get(ROLLOUT_ID)).toMatchObject({ step: 1, cutoverDone: false });
        await resumeStep(gate, ramped);
        const back = await killedMidway(kind, url, 'rollback', ramped.length);
        if (back === 2 * ramped.length && attempt < 4) continue;
        expect(back).toBeLessThan(2 * ramped.length);
        expect(await gate.rollouts.get(ROLLOUT_ID)).toMatchObject({
          status: 'rolling_back',
          cutoverDone: false,
        });
        await resumeRollback(gate, ramped);
        return;
      } finally {
        await gate.close();
      }
    }
  }, 60_000);
});

/** Advance resumes the interrupted step, and does not start another. */
async function resumeStep(gate: Fencegate, ramped: readonly string[]): Promise<void> {
  const resumed = await gate.rollouts.advance({ rolloutId: ROLLOUT_ID });
  expect(resumed).toMatchObject({ step: 1, percent: 90, cutoverDone: true });
  const stepped = await allScopes(gate);
  expect(stepped.filter((s) => s.policyVersion === 'v8').map((s) => s.scope)).toEqual(ramped);
  expect(stepped.every((s) => s.fence === (s.policyVersion === 'v8' ? 2 : 1))).toBe(true);
  const stepMoves = await movesPerScope(gate, `${ROLLOUT_ID}/step-1`);
  expect(stepMoves).toHaveLength(ramped.length);
  expect(stepMoves.every((n) => n === 1)).toBe(true);
}

/** The rollback sent again finishes it: each ramped scope moved back once. */
async function resumeRollback(gate: Fencegate, ramped: readonly string[]): Promise<void> {
  const rolledBack = await gate.rollouts.rollback({ rolloutId: ROLLOUT_ID });
  expect(rolledBack.status).toBe('rolled_back');
  const after = await allScopes(gate);
  expect(after.every((s) => s.policyVersion === 'v7')).toBe(true);
  expect(after.every((s) => s.fence === (ramped.includes(s.scope) ? 3 : 1))).toBe(true);
  const backMoves = await movesPerScope(gate, `${ROLLOUT_ID}/rollback`);
  expect(backMoves).toHaveLength(ramped.length);
  expect(backMoves.every((n) => n === 1)).toBe(true);
  expect((await verifyStore(gate.store, { tenant: gate.tenant })).ok).toBe(true);
}
