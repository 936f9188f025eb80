/**
 * A cutover killed with SIGKILL part way through, in another process, then resumed under the same
 * cutoverId: the result must equal an uninterrupted cutover of an identical store, with every
 * scope bumped exactly once. The kill point is chosen by watching the store (the audit log shows
 * some but not all cutover entries), not by a timer.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { isFencegateError } from '../../src/errors.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import type { CutoverRequest, ScopeState } from '../../src/types.js';
import {
  AREA_STORES,
  storesFor,
  type TestStoreKind,
  type StoreFactory,
} from '../helpers/stores.js';
import { CHUNK } from './chunked-store.js';
import { countBy, HOUR, readAudit, registerPolicies, scopeName } from './cutover-helpers.js';

/**
 * Six chunks (of CHUNK scopes; on etcd, of what one Txn holds): the kill is sent once the first
 * has committed, so it lands before the last but in a rare run, which prepares again.
 */
const SCOPES = 6 * CHUNK;
const CUTOVER_ID = 'resumable-v8';
const REQUEST: CutoverRequest = {
  cutoverId: CUTOVER_ID,
  toPolicy: 'v8',
  holder: 'controller-v8',
  scopes: Array.from({ length: SCOPES }, (_, i) => scopeName(i)),
};
const CHILD = new URL('./interrupted-cutover-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());

/**
 * A fresh store with SCOPES scopes pinned to v7, each held by a v7 worker at fence 1. The store
 * runs on its own clock (the host's for SQLite, the database's for PostgreSQL), so the child
 * process and this one share store time.
 */
async function prepare(stores: StoreFactory): Promise<{ gate: Fencegate; url: string }> {
  const { store, url } = await stores.open({ groupCommit: true, cutoverChunk: CHUNK });
  const gate = await Fencegate.open({ store });
  await registerPolicies(gate);
  for (let start = 0; start < SCOPES; start += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, SCOPES - start) }, (_, k) => start + k).map((i) =>
        gate.acquire({
          scope: scopeName(i),
          holder: `v7-w${i % 16}`,
          ttlMs: HOUR,
          policyVersion: 'v7',
        }),
      ),
    );
  }
  return { gate, url };
}

/**
 * Starts the cutover in a child process and kills it as soon as the store shows a first cutover
 * entry. Returns how many cutover entries the store holds once the child is dead.
 */
async function cutoverKilledMidway(kind: TestStoreKind, url: string): Promise<number> {
  const watcher = await kind.behind.watchCutover(url);
  const child = spawn(
    process.execPath,
    [childBundle!.bundleOf(CHILD), watcher.childUrl, CUTOVER_ID, String(SCOPES)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit');
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    while (child.exitCode === null && child.signalCode === null) {
      if ((await watcher.cutoverEntries()) > 0) {
        child.kill('SIGKILL');
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const [code, signal] = (await exited) as [number | null, string | null];
    if (signal !== 'SIGKILL' && code !== 0) throw new Error(`cutover child failed: ${stderr}`);
    await watcher.childGone();
    return await watcher.cutoverEntries();
  } finally {
    await watcher.close();
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

describe.each(AREA_STORES)('an interrupted cutover on $name', (kind) => {
  const stores = storesFor(kind, 'cutover_interrupted');

  it('killed with SIGKILL mid-way, resumes under its cutoverId to the uninterrupted result', async () => {
    // A cutover that finishes before the kill lands proves nothing; try again on a fresh store.
    let gate: Fencegate | null = null;
    let movedAtKill = SCOPES;
    for (let attempt = 0; attempt < 5 && movedAtKill === SCOPES; attempt++) {
      await gate?.close();
      const prepared = await prepare(stores);
      gate = prepared.gate;
      movedAtKill = await cutoverKilledMidway(kind, prepared.url);
    }
    expect(movedAtKill).toBeGreaterThan(0);
    expect(movedAtKill).toBeLessThan(SCOPES);
    if (gate === null) throw new Error('no store was prepared');

    // The crash left a consistent prefix: each moved scope has its bump, its progress mark and its
    // audit entry, and nothing else moved.
    const partial = await gate.store.getCutover(gate.tenant, CUTOVER_ID);
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
    expect((await gate.listCutovers()).items).toEqual([
      expect.objectContaining({
        cutoverId: CUTOVER_ID,
        scopes: SCOPES,
        moved: movedAtKill,
        finishedAt: null,
      }),
    ]);

    const resumed = await gate.cutover(REQUEST);

    const { gate: reference } = await prepare(stores);
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
    // Up to five stores prepared and a child process killed in each: on etcd under a full test run
    // that outlasts the default 30 s.
  }, 120_000);
});

describe('the cutoverChunk test option', () => {
  const dir = tempDir();

  it('is refused unless a whole number from 1 to 1,000, before anything is opened', async () => {
    const path = join(dir.path, 'never.db');
    try {
      for (const cutoverChunk of [0, -1, 1.5, 1001, Number.NaN]) {
        const sqlite = caught(() => SqliteStore.open({ path, cutoverChunk }));
        expect(isFencegateError(sqlite) && sqlite.code).toBe('invalid_request');
        expect((sqlite as Error).message).toContain(
          'cutoverChunk must be a whole number from 1 to 1000',
        );
        // Nothing listens on port 1: a store that connected first would be store_unavailable.
        const postgres = await PostgresStore.open({
          url: 'postgres://nobody@127.0.0.1:1/none',
          cutoverChunk,
        }).catch((error: unknown) => error);
        expect(isFencegateError(postgres) && postgres.code).toBe('invalid_request');
      }
      expect(existsSync(path)).toBe(false);
    } finally {
      dir.cleanup();
    }
  });
});

function caught(open: () => unknown): unknown {
  try {
    open();
  } catch (error) {
    return error;
  }
  return undefined;
}
