/**
 * A rollout step, its rollback and a plain prefix cutover list their scopes in pages, one store
 * transaction each, after a start that lists nothing: the start stays small however large the
 * selection. Here the pages are small (the stores are opened with small cutover chunks; etcd's
 * chunk is what one Txn holds), so a few hundred scopes make several pages. Each case checks, from
 * the store, that the list grew over several transactions, that exactly the scopes the hash admits
 * moved, once each, that scopes created while the list was being built ended up listed or pinned by
 * the hash, and that a list left half built by a handle that went away (a process killed between
 * two pages leaves exactly this) is finished from another handle.
 */
import { describe, expect, it } from 'vitest';
import { admits } from '../../src/core/rollout-rules.js';
import { Fencegate } from '../../src/gate.js';
import { CasMapStore } from '../../src/store/cas-map/cas-map-store.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { Store } from '../../src/store/store.js';
import type { ScopeState, StartRolloutRequest } from '../../src/types.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { HOUR, readAudit, registerPolicies } from '../cutover/cutover-helpers.js';

const TENANT = 'default';
/** The names a page examines, as many as a chunk moves: the stores are opened with it. */
const PAGE = 10;
/** Scopes for four pages and a half of PAGE. */
const SCOPES = 4 * PAGE + 5;
const START: StartRolloutRequest & { rolloutId: string } = {
  rolloutId: 'r-pages',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [50, 100],
};
const STEP = `${START.rolloutId}/step-1`;
const ROLLBACK = `${START.rolloutId}/rollback`;

function scopeName(i: number): string {
  return `wf-${String(i).padStart(4, '0')}/memory`;
}

/** The first name `base-<n>` that the hash admits at 50 % (or does not, with `admitted` false). */
function nameBy(base: string, admitted: boolean): string {
  for (let n = 0; ; n += 1) {
    const name = `${base}-${n}`;
    if (admits(START.rolloutId, name, 50) === admitted) return name;
  }
}

/** How a case reaches its store: a first handle, and another one on the same store after it. */
interface Subject {
  open(): Promise<Store>;
  /** Another handle once `first` is gone; the same handle where the store lives in this process. */
  reopen(first: Store): Promise<Store>;
}

async function v7Scopes(gate: Fencegate, names: readonly string[]): Promise<void> {
  await Promise.all(
    names.map(async (scope) => {
      const grant = await gate.acquire({ scope, holder: 'v7-w', ttlMs: HOUR, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7-w', fence: grant.fence });
    }),
  );
}

async function allScopes(gate: Fencegate, prefix: string): Promise<Map<string, ScopeState>> {
  const scopes = new Map<string, ScopeState>();
  let cursor: string | undefined;
  do {
    const page = await gate.listScopes({ prefix, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const scope of page.items) scopes.set(scope.scope, scope);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return scopes;
}

/** How many cutover entries each scope has under `cutoverId`. */
async function movesOf(gate: Fencegate, cutoverId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const entry of await readAudit(gate, { kind: 'cutover' })) {
    if (entry.reason !== cutoverId || entry.scope === null) continue;
    counts.set(entry.scope, (counts.get(entry.scope) ?? 0) + 1);
  }
  return counts;
}

/**
 * Sends the cutover's chunks one by one while it is still listing (nothing moved yet), and
 * answers how many scopes it had listed after each: the list as it grew, transaction by
 * transaction. `between` runs after the given number of pages.
 */
async function listPages(
  store: Store,
  cutoverId: string,
  options: { pages?: number; between?: (pages: number) => Promise<void> } = {},
): Promise<number[]> {
  const planned: number[] = [];
  for (let pages = 1; options.pages === undefined || pages <= options.pages; pages += 1) {
    expect(await store.moveCutoverChunk(TENANT, cutoverId)).toBeGreaterThan(0);
    const cutover = await store.getCutover(TENANT, cutoverId);
    if (cutover === null) throw new Error(`no cutover ${cutoverId}`);
    // The first chunk that moves scopes comes after the last page.
    if (cutover.fences.length + cutover.skipped.length > 0) break;
    planned.push(cutover.planned);
    await options.between?.(pages);
  }
  return planned;
}

/** Several pages, each one adding to the list, none taking from it. */
function expectSeveralPages(planned: readonly number[], total: number): void {
  const growing = planned.filter((n, i) => n > (i === 0 ? 0 : planned[i - 1]!));
  expect(growing.length).toBeGreaterThanOrEqual(2);
  expect(planned.every((n, i) => i === 0 || n >= planned[i - 1]!)).toBe(true);
  expect(planned.at(-1)).toBeLessThanOrEqual(total);
}

function pagedListingCases(subject: Subject, scopes: number): void {
  it('a rollout step over more than a page lists it in several transactions, resumes a list left half built, and moves exactly what the hash admits', async () => {
    let store = await subject.open();
    let gate = await Fencegate.open({ store });
    const names = Array.from({ length: scopes }, (_, i) => scopeName(i));
    // Behind the list's position after two pages, and ahead of it, created while it is built.
    const behind = nameBy('wf-0000/new', true);
    const behindOut = nameBy('wf-0000/new', false);
    const ahead = nameBy(`wf-${String(scopes).padStart(4, '0')}/new`, true);
    const takenOver = nameBy(`wf-${String(scopes).padStart(4, '0')}/op`, true);
    try {
      await registerPolicies(gate);
      await v7Scopes(gate, names);
      // Already on v8 before the rollout: never listed. Deleted: never listed either.
      const onV8 = nameBy('wf-9999/v8', true);
      await gate.acquire({ scope: onV8, holder: 'v8-w', ttlMs: HOUR, policyVersion: 'v8' });
      const deleted = names.find((name) => admits(START.rolloutId, name, 50))!;
      await gate.deleteScope(deleted);

      // The start records the step and lists nothing.
      const started = await store.changeRollout(TENANT, { action: 'start', request: START });
      expect(started).toMatchObject({ status: 'running', step: 1, percent: 50 });
      expect(await store.getCutover(TENANT, STEP)).toMatchObject({
        status: 'running',
        planned: 0,
      });

      // Two pages, then new scopes, then the handle goes away with the list half built.
      const firstPages = await listPages(store, STEP, { pages: 2 });
      expect(firstPages).toHaveLength(2);
      expect(firstPages.at(-1)).toBeGreaterThan(0);
      const v8Only = { ttlMs: HOUR, policyVersions: ['v7', 'v8'] };
      // A worker that runs both versions is pinned by the hash, whichever side of the list.
      const pinnedBehind = await gate.acquire({ scope: behind, holder: 'new-w', ...v8Only });
      const pinnedOut = await gate.acquire({ scope: behindOut, holder: 'new-w', ...v8Only });
      const pinnedAhead = await gate.acquire({ scope: ahead, holder: 'new-w', ...v8Only });
      expect([pinnedBehind, pinnedOut, pinnedAhead].map((g) => g.policyVersion)).toEqual([
        'v8',
        'v7',
        'v8',
      ]);
      // An operator's takeover on v7 ahead of the list's position: the list reaches it.
      await gate.takeover(takenOver, { holder: 'operator', policyVersion: 'v7' });
      const half = await store.getCutover(TENANT, STEP);
      expect(half?.planned).toBe(firstPages.at(-1));
      await gate.close();

      store = await subject.reopen(store);
      gate = await Fencegate.open({ store });
      const laterPages = await listPages(store, STEP);
      const listed = [...firstPages, ...laterPages];
      expectSeveralPages(listed, scopes + 1);
      // Sent again, the start resumes the step where the other handle left it.
      const resumed = await gate.rollouts.start(START);
      expect(resumed).toMatchObject({ step: 1, percent: 50, cutoverDone: true });

      const after = await allScopes(gate, 'wf-');
      const admitted = (scope: string) => admits(START.rolloutId, scope, 50);
      const shouldMove = [...names.filter((name) => name !== deleted), takenOver]
        .filter(admitted)
        .sort();
      const moves = await movesOf(gate, STEP);
      expect([...moves.keys()].sort()).toEqual(shouldMove);
      expect([...moves.values()].every((n) => n === 1)).toBe(true);
      const cutover = await store.getCutover(TENANT, STEP);
      expect(cutover?.fences.map((f) => f.scope)).toEqual(shouldMove);
      expect(cutover?.planned).toBe(shouldMove.length);
      for (const [scope, state] of after) {
        if (scope === deleted) {
          expect(state.status).toBe('deleted');
          continue;
        }
        // Every live scope of the selection runs the version the hash gives it.
        expect([scope, state.policyVersion]).toEqual([scope, admitted(scope) ? 'v8' : 'v7']);
      }
      expect(after.get(behind)?.fence).toBe(pinnedBehind.fence);
      expect(after.get(onV8)?.fence).toBe(1);

      // The rollback lists every scope the rollout moved or pinned, in pages too.
      await store.changeRollout(TENANT, { action: 'rollback', rolloutId: START.rolloutId });
      const backPages = await listPages(store, ROLLBACK);
      const marked = shouldMove.length + 2; // the moved ones, and the two acquires it pinned
      expectSeveralPages(backPages, marked);
      const rolledBack = await gate.rollouts.rollback({ rolloutId: START.rolloutId });
      expect(rolledBack.status).toBe('rolled_back');
      const back = await movesOf(gate, ROLLBACK);
      expect([...back.keys()].sort()).toEqual([...shouldMove, behind, ahead].sort());
      expect([...back.values()].every((n) => n === 1)).toBe(true);
      const final = await allScopes(gate, 'wf-');
      for (const [scope, state] of final) {
        if (scope === onV8) expect(state.policyVersion).toBe('v8');
        else if (scope !== deleted) expect([scope, state.policyVersion]).toEqual([scope, 'v7']);
      }
    } finally {
      await gate.close();
    }
  }, 60_000);

  it('a rollout over a list of scopes lists the list in pages, the names not created yet too', async () => {
    const store = await subject.open();
    const gate = await Fencegate.open({ store });
    try {
      await registerPolicies(gate);
      const names = Array.from({ length: scopes }, (_, i) => `ls-${String(i).padStart(4, '0')}`);
      const created = names.filter((_, i) => i % 5 !== 0);
      await v7Scopes(gate, created);
      const request = { ...START, rolloutId: 'r-list', prefix: undefined, scopes: names };
      await store.changeRollout(TENANT, { action: 'start', request });
      expectSeveralPages(await listPages(store, 'r-list/step-1'), scopes);
      await gate.rollouts.start(request);
      const admitted = names.filter((name) => admits('r-list', name, 50));
      const moves = await movesOf(gate, 'r-list/step-1');
      expect([...moves.keys()].sort()).toEqual(admitted);
      const after = await allScopes(gate, 'ls-');
      for (const name of names) {
        // A listed name not created yet is created by its move; the others are not created.
        const expected = admitted.includes(name) ? 'v8' : created.includes(name) ? 'v7' : null;
        expect([name, after.get(name)?.policyVersion ?? null]).toEqual([name, expected]);
      }
    } finally {
      await gate.close();
    }
  }, 60_000);

  it('a plain cutover over a prefix lists it in pages and moves the active scopes under it', async () => {
    const store = await subject.open();
    const gate = await Fencegate.open({ store });
    try {
      await registerPolicies(gate);
      const names = Array.from({ length: scopes }, (_, i) => `pc-${String(i).padStart(4, '0')}`);
      await v7Scopes(gate, names);
      await gate.deleteScope(names[1]!);
      const request = { cutoverId: 'pc-all', toPolicy: 'v8', holder: 'controller', prefix: 'pc-' };
      await store.startCutover(TENANT, request);
      expect(await store.getCutover(TENANT, 'pc-all')).toMatchObject({ planned: 0 });
      expectSeveralPages(await listPages(store, 'pc-all'), scopes);
      const result = await gate.cutover(request);
      const active = names.filter((name) => name !== names[1]);
      expect(result.fences.map((f) => f.scope)).toEqual(active);
      expect(result.skipped).toEqual([]);
      const moves = await movesOf(gate, 'pc-all');
      expect(moves.size).toBe(active.length);
      expect([...moves.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await gate.close();
    }
  }, 60_000);
}

describe.each(AREA_STORES)('rollout and cutover lists built in pages on $name', (kind) => {
  const stores = storesFor(kind, 'paged_listing');
  let url = '';
  const scopes = SCOPES;
  pagedListingCases(
    {
      open: async () => {
        const opened = await stores.open({ cutoverChunk: PAGE });
        url = opened.url;
        return opened.store;
      },
      reopen: () => stores.reopen(url, { cutoverChunk: PAGE }),
    },
    scopes,
  );
});

describe.each([
  ['memory', () => new MemoryStore({ cutoverChunk: PAGE })],
  ['cas-map', () => new CasMapStore({ cutoverChunk: PAGE })],
] as const)('rollout and cutover lists built in pages on %s', (_name, create) => {
  /** The store lives in this process: the same one, kept open across the two handles. */
  const keptOpen = (store: Store): Store =>
    new Proxy(store, {
      get: (target, key): unknown => {
        if (key === 'close') return () => Promise.resolve();
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function'
          ? (value as (...args: unknown[]) => unknown).bind(target)
          : value;
      },
    });
  pagedListingCases(
    { open: () => Promise.resolve(keptOpen(create())), reopen: (first) => Promise.resolve(first) },
    SCOPES,
  );
});
