/**
 * A cutover killed with SIGKILL part way through, in another process, then resumed under the same
 * cutoverId: the result must equal an uninterrupted cutover of an identical store, with every
 * scope bumped exactly once. The kill point is chosen by watching the store (the audit log shows
 * some but not all cutover entries), not by a timer.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Etcd3 } from 'etcd3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { parseSqliteUrl } from '../../src/store/sqlite/sqlite-url.js';
import { prefixEnd } from '../../src/store/etcd/etcd-keys.js';
import { parseEtcdUrl } from '../../src/store/etcd/etcd-url.js';
import type { CutoverRequest, ScopeState } from '../../src/types.js';
import {
  STORE_BACKENDS,
  storeFactory,
  type StoreBackend,
  type StoreFactory,
} from '../postgres/store-backends.js';
import { countBy, HOUR, readAudit, registerPolicies, scopeName } from './cutover-helpers.js';

const SCOPES = 5000;
const CUTOVER_ID = 'resumable-v8';
const REQUEST: CutoverRequest = {
  cutoverId: CUTOVER_ID,
  toPolicy: 'v8',
  holder: 'controller-v8',
  scopes: Array.from({ length: SCOPES }, (_, i) => scopeName(i)),
};
const CHILD = new URL('./interrupted-cutover-child.ts', import.meta.url).pathname;

/**
 * A fresh store with SCOPES scopes pinned to v7, each held by a v7 worker at fence 1. The store
 * runs on its own clock (the host's for SQLite, the database's for PostgreSQL), so the child
 * process and this one share store time.
 */
async function prepare(stores: StoreFactory): Promise<{ gate: Fencegate; url: string }> {
  const { store, url } = await stores.open({ groupCommit: true });
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

/** Reads the store behind the child's back: how many cutover entries are committed. */
interface Watcher {
  cutoverEntries(): Promise<number>;
  /** Resolves once nothing the killed child sent can still commit. */
  childGone(): Promise<void>;
  close(): Promise<void>;
}

async function watch(backend: StoreBackend, url: string): Promise<Watcher> {
  if (backend === 'sqlite') {
    const db = new Database(parseSqliteUrl(url).path, { readonly: true });
    const moved = db.prepare("SELECT COUNT(*) AS n FROM audit WHERE kind = 'cutover'");
    return {
      cutoverEntries: () => Promise.resolve((moved.get() as { n: number }).n),
      // A SQLite write is done when the process is gone.
      childGone: () => Promise.resolve(),
      close: () => {
        db.close();
        return Promise.resolve();
      },
    };
  }
  if (backend === 'etcd') return Promise.resolve(watchEtcd(url));
  // The store's URL without fencegate's own parameter is the driver's.
  const driverUrl = new URL(url);
  const schema = driverUrl.searchParams.get('schema');
  driverUrl.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: driverUrl.toString() });
  client.on('error', () => undefined);
  await client.connect();
  return {
    cutoverEntries: async () =>
      (
        await client.query<{ n: number }>(
          `SELECT count(*)::integer AS n FROM ${schema}.audit WHERE kind = 'cutover'`,
        )
      ).rows[0]!.n,
    // The server may still be running the chunk the child sent when it died: it either commits
    // whole or rolls back, and only then does the backend go away.
    childGone: async () => {
      for (;;) {
        const { rows } = await client.query<{ n: number }>(
          'SELECT count(*)::integer AS n FROM pg_stat_activity WHERE application_name = $1',
          [childApplication(url)],
        );
        if (rows[0]!.n === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    close: () => client.end(),
  };
}

/**
 * etcd: the moved scopes are the cutover's step keys (written in the Txn that audits the move).
 * A Txn the child sent before it died is applied within the server's request timeout or never;
 * the child is gone once the store's revision has stood still for a while.
 */
function watchEtcd(url: string): Watcher {
  const target = parseEtcdUrl(url);
  const client = new Etcd3({ hosts: target.hosts.map((host) => `http://${host}`) });
  const steps = Buffer.from(`${target.prefix}/cs/`);
  const count = () =>
    client.kv.range({ key: steps, range_end: prefixEnd(steps), count_only: true });
  return {
    cutoverEntries: async () => Number((await count()).count),
    childGone: async () => {
      let revision = '';
      for (let still = 0; still < 10;) {
        const now = (await count()).header.revision;
        still = now === revision ? still + 1 : 0;
        revision = now;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => {
      client.close();
      return Promise.resolve();
    },
  };
}

/** Names the child's connections, so the test can wait until the server has let go of them. */
function childApplication(url: string): string {
  return `cutover-child-${new URL(url).searchParams.get('schema') ?? ''}`;
}

function withApplicationName(url: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', childApplication(url));
  return named.toString();
}

/**
 * Starts the cutover in a child process and kills it as soon as the store shows a first cutover
 * entry. Returns how many cutover entries the store holds once the child is dead.
 */
async function cutoverKilledMidway(backend: StoreBackend, url: string): Promise<number> {
  const watcher = await watch(backend, url);
  const childUrl = backend === 'postgres' ? withApplicationName(url) : url;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', CHILD, childUrl, CUTOVER_ID, String(SCOPES)],
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

describe.each(STORE_BACKENDS)('an interrupted cutover on %s', (backend) => {
  const stores = storeFactory(backend, 'cutover_interrupted');

  it('killed with SIGKILL mid-way, resumes under its cutoverId to the uninterrupted result', async () => {
    // A cutover that finishes before the kill lands proves nothing; try again on a fresh store.
    let gate: Fencegate | null = null;
    let movedAtKill = SCOPES;
    for (let attempt = 0; attempt < 5 && movedAtKill === SCOPES; attempt++) {
      await gate?.close();
      const prepared = await prepare(stores);
      gate = prepared.gate;
      movedAtKill = await cutoverKilledMidway(backend, prepared.url);
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
  });
});
