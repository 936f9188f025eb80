/**
 * SQLite is durable by default: `fencegate serve` on `sqlite:PATH` syncs the WAL once per write
 * transaction, so every acknowledged commit is on disk, and group commit makes that one sync per
 * batch, not per commit. Counted from outside with strace (fsync/fdatasync on the -wal file) and
 * compared with the transactions the WAL holds (its commit frames); concurrent grants are batched
 * alike. `?synchronous=normal` is the
 * documented opt-out: no sync at commit at all.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startServe, type ServerProcess } from './cli-process.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

const SCOPES = 8;
const WAVES = 5;
const WAVE_SIZE = 64;
const ONE_AT_A_TIME = 10;

/** Syncs of the WAL file so far, from strace's output (`-y` prints each fd's path). */
function walSyncs(tracePath: string): number {
  return readFileSync(tracePath, 'utf8')
    .split('\n')
    .filter((line) => /\b(fsync|fdatasync)\(\d+<[^>]*-wal>\)\s+=\s+0/.test(line)).length;
}

/**
 * Transactions in the WAL so far: frames whose header marks a commit (non-zero database size),
 * counting only frames of the WAL's current generation (salts equal to the header's).
 */
function walTransactions(walPath: string): number {
  const wal = readFileSync(walPath);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

/**
 * Stops the traced server: SIGTERM to node itself (strace does not pass signals on), whose pid is
 * the first one strace's output names; strace exits with it.
 */
async function stopTraced({ server, trace }: TracedServer): Promise<void> {
  const pid = Number(/^(\d+) /.exec(readFileSync(trace, 'utf8'))?.[1]);
  if (Number.isSafeInteger(pid) && pid > 0) process.kill(pid, 'SIGTERM');
  else server.child.kill('SIGKILL');
  await server.exited;
}

interface TracedServer {
  server: ServerProcess;
  client: FencegateClient;
  trace: string;
  wal: string;
}

async function startTraced(name: string, urlSuffix: string): Promise<TracedServer> {
  const db = join(dir.path, `${name}.db`);
  const trace = join(dir.path, `${name}.strace`);
  const adminToken = `admin-${randomBytes(16).toString('hex')}`;
  const server = await startServe(
    ['--port', '0', '--store', `sqlite:${db}${urlSuffix}`],
    { FENCEGATE_ADMIN_TOKEN: adminToken },
    ['strace', '-f', '-y', '-qq', '-e', 'trace=fsync,fdatasync', '-o', trace],
  );
  const response = await fetch(`${server.url}/v1/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'durable', role: 'worker' }),
  });
  const { token } = (await response.json()) as { token: string };
  const client = new FencegateClient({ url: server.url, token, retries: 0, timeoutMs: 10_000 });
  return { server, client, trace, wal: `${db}-wal` };
}

/** Runs the workload; answers the syncs and WAL transactions each phase added. */
async function workload({ client, trace, wal }: TracedServer) {
  const grants = await Promise.all(
    Array.from({ length: SCOPES }, (_, i) =>
      client.acquire({ scope: `d-${i}`, holder: 'w', ttlMs: 3_600_000 }),
    ),
  );
  const commit = async (i: number, tag: string) => {
    const grant = grants[i % SCOPES]!;
    const result = await client.commit({
      scope: grant.scope,
      fence: grant.fence,
      operationId: `${tag}-${i}`,
      writes: [{ name: `${tag}-${i}`, expectRevision: 0, value: { i } }],
    });
    expect(result.outcome).toBe('committed');
  };

  const alone = { syncs: 0, transactions: 0, afterEach: [] as number[] };
  const syncsBefore = walSyncs(trace);
  const transactionsBefore = walTransactions(wal);
  for (let i = 0; i < ONE_AT_A_TIME; i++) {
    await commit(i, 'alone');
    // strace writes a sync's line when the call returns, before the answer is sent.
    alone.afterEach.push(walSyncs(trace) - syncsBefore);
  }
  alone.syncs = walSyncs(trace) - syncsBefore;
  alone.transactions = walTransactions(wal) - transactionsBefore;

  const loadSyncsBefore = walSyncs(trace);
  const loadTransactionsBefore = walTransactions(wal);
  for (let wave = 0; wave < WAVES; wave++) {
    await Promise.all(
      Array.from({ length: WAVE_SIZE }, (_, i) => commit(wave * WAVE_SIZE + i, 'load')),
    );
  }
  const leaseSyncsBefore = walSyncs(trace);
  const leaseTransactionsBefore = walTransactions(wal);
  await Promise.all(
    Array.from({ length: WAVE_SIZE }, (_, i) =>
      client.acquire({ scope: `lease-${i}`, holder: 'w', ttlMs: 60_000 }),
    ),
  );
  return {
    alone,
    leases: {
      syncs: walSyncs(trace) - leaseSyncsBefore,
      transactions: walTransactions(wal) - leaseTransactionsBefore,
    },
    load: {
      syncs: walSyncs(trace) - loadSyncsBefore,
      transactions: walTransactions(wal) - loadTransactionsBefore,
    },
  };
}

describe('SQLite durability, counted from outside the server', () => {
  it('synchronous=full by default: one WAL sync per commit alone, one per group-commit batch under load', async () => {
    const traced = await startTraced('full', '');
    try {
      const { alone, leases, load } = await workload(traced);
      // Each answer came after a sync of its own; one sync per transaction.
      alone.afterEach.forEach((syncs, i) => expect(syncs).toBeGreaterThanOrEqual(i + 1));
      expect(alone.syncs).toBe(alone.transactions);
      expect(alone.transactions).toBeGreaterThanOrEqual(ONE_AT_A_TIME);
      // Every batch is one transaction and one sync, and concurrent commits share batches.
      expect(load.syncs).toBe(load.transactions);
      expect(load.transactions).toBeGreaterThanOrEqual(WAVES);
      expect(load.transactions).toBeLessThan(WAVES * WAVE_SIZE);
      // Grants are batched the same way.
      expect(leases.syncs).toBe(leases.transactions);
      expect(leases.transactions).toBeGreaterThanOrEqual(1);
      expect(leases.transactions).toBeLessThan(WAVE_SIZE);
    } finally {
      await stopTraced(traced);
    }
  });

  it('synchronous=normal (opt-out): commits are written to the WAL but never synced', async () => {
    const traced = await startTraced('normal', '?synchronous=normal');
    try {
      const { alone, load } = await workload(traced);
      expect(alone.transactions).toBeGreaterThanOrEqual(ONE_AT_A_TIME);
      expect(alone.syncs).toBe(0);
      expect(load.transactions).toBeGreaterThanOrEqual(WAVES);
      expect(load.syncs).toBe(0);
    } finally {
      await stopTraced(traced);
    }
  });
});
