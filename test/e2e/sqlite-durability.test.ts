/**
 * SQLite is durable by default: `fencegate serve` on `sqlite:PATH` answers a grant or commit only
 * after the WAL frames of its transaction were synced to disk, and one sync serves every
 * transaction committed while the previous sync ran. Checked from outside the server with strace:
 * for every answer the server wrote to a socket, the WAL frame that commits its transaction (found
 * in the WAL file by the operation's or scope's name) was written, then synced by an fsync or
 * fdatasync that ended before the answer was sent. `?synchronous=normal` is the documented opt-out:
 * no sync at commit at all. A batch of commits over `POST /v1/commits` is one transaction and one
 * sync.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { programMissing, skipForMissing } from '../helpers/missing.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startServe, type ServerProcess } from './cli-process.js';
import { readSyscalls, type SyscallEvent } from './strace-events.js';
import { readWal } from './wal-frames.js';

/** Counted with strace: skipped, and reported, on a machine without it. */
const noStrace = skipForMissing(
  'SQLite durability counted with strace',
  programMissing('strace'),
  'apt-get install strace',
);

const dir = tempDir();
afterAll(() => dir.cleanup());

const SCOPES = 8;
const WAVES = 5;
const WAVE_SIZE = 64;
const ONE_AT_A_TIME = 10;

/** The names the workload gives operations and scopes: fixed width, so none is a prefix of another. */
const NAME = /(?:alone|load|lease)-\d{4}/g;
const nameOf = (tag: string, i: number) => `${tag}-${String(i).padStart(4, '0')}`;

interface TracedServer {
  server: ServerProcess;
  client: FencegateClient;
  trace: string;
  wal: string;
  db: string;
}

async function startTraced(name: string, urlSuffix: string): Promise<TracedServer> {
  const db = join(dir.path, `${name}.db`);
  const trace = join(dir.path, `${name}.strace`);
  const adminToken = `admin-${randomBytes(16).toString('hex')}`;
  const server = await startServe(
    ['--port', '0', '--store', `sqlite:${db}${urlSuffix}`],
    { FENCEGATE_ADMIN_TOKEN: adminToken },
    [
      'strace',
      ...['-f', '-y', '-qq', '-ttt', '-T', '-s', '512', '-o', trace],
      ...['-e', 'trace=fsync,fdatasync,pwrite64,write,writev,sendto,sendmsg'],
    ],
  );
  const response = await fetch(`${server.url}/v1/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'durable', role: 'worker' }),
  });
  const { token } = (await response.json()) as { token: string };
  const client = new FencegateClient({
    url: server.url,
    token,
    retries: 0,
    timeoutMs: 10_000,
    // One answer per commit: the counts below pair each commit's answer with its sync.
    coalesceCommits: false,
  });
  return { server, client, trace, wal: `${db}-wal`, db };
}

/**
 * Stops the traced server: SIGTERM to node itself (strace does not pass signals on), whose pid is
 * the first one strace's log names; strace exits with it, its log complete.
 */
async function stopTraced({ server, trace }: TracedServer): Promise<SyscallEvent[]> {
  const pid = readSyscalls(trace)[0]?.pid;
  if (pid !== undefined) process.kill(pid, 'SIGTERM');
  else server.child.kill('SIGKILL');
  await server.exited;
  return readSyscalls(trace);
}

/** Runs the workload: commits one at a time, then in waves, then concurrent grants. */
async function workload({
  client,
  wal,
  db,
}: TracedServer): Promise<{ loadStart: number; loadEnd: number; walBytes: Buffer }> {
  // The frames are looked up in the log afterwards. Once the server's checkpoint thread has folded
  // the whole log into the file (a slow machine gets there within the workload), the next write
  // starts the log over and overwrites the first frames. A read transaction held open from outside
  // keeps every frame in place: the log is never restarted under a reader.
  const reader = new Database(db, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM sqlite_master').get();
  const grants = await Promise.all(
    Array.from({ length: SCOPES }, (_, i) =>
      client.acquire({ scope: `d-${i}`, holder: 'w', ttlMs: 3_600_000 }),
    ),
  );
  const commit = async (i: number, tag: string) => {
    const grant = grants[i % SCOPES]!;
    const name = nameOf(tag, i);
    const result = await client.commit({
      scope: grant.scope,
      fence: grant.fence,
      operationId: name,
      writes: [{ name, expectRevision: 0, value: { i } }],
    });
    expect(result.outcome).toBe('committed');
  };
  for (let i = 0; i < ONE_AT_A_TIME; i++) await commit(i, 'alone');
  const loadStart = Date.now() * 1000;
  for (let wave = 0; wave < WAVES; wave++) {
    await Promise.all(
      Array.from({ length: WAVE_SIZE }, (_, i) => commit(wave * WAVE_SIZE + i, 'load')),
    );
  }
  const loadEnd = Date.now() * 1000;
  await Promise.all(
    Array.from({ length: WAVE_SIZE }, (_, i) =>
      client.acquire({ scope: nameOf('lease', i), holder: 'w', ttlMs: 60_000 }),
    ),
  );
  // Read now: a clean shutdown checkpoints the log and deletes it.
  const walBytes = readFileSync(wal);
  reader.exec('COMMIT');
  reader.close();
  return { loadStart, loadEnd, walBytes };
}

const PWRITE_AT = /, (\d+), (\d+)$/;

/**
 * For every answer naming an operation or scope of the workload: the write of the WAL frame that
 * committed it, and a sync of the WAL that began after that write and ended before the answer
 * (or, when there is none, the first that began after the write, which the test then fails on).
 * Answers are the server's writes to sockets; the frame is the first commit frame at or after the
 * first frame holding the name.
 */
function answersAndSyncs(events: SyscallEvent[], walBytes: Buffer) {
  const wal = readWal(walBytes);
  const syncs = events.filter((e) => /^f(data)?sync$/.test(e.name) && e.path.endsWith('-wal'));
  const walWrites = events.filter((e) => e.name === 'pwrite64' && e.path.endsWith('-wal'));
  const answers = events.filter(
    (e) => e.path.startsWith('socket:') && /^(write|writev|send)/.test(e.name),
  );
  const checked: {
    name: string;
    written: SyscallEvent;
    synced: SyscallEvent | undefined;
    answer: SyscallEvent;
  }[] = [];
  for (const answer of answers) {
    for (const name of new Set(answer.args.match(NAME) ?? [])) {
      const frame = wal.commitFrameOf(name);
      if (frame === undefined) throw new Error(`${name} was answered but is not in the WAL`);
      const written = walWrites.findLast((write) => {
        const offset = Number(PWRITE_AT.exec(write.args)?.[2]);
        return offset >= frame.offset && offset < frame.end && write.end <= answer.start;
      });
      if (written === undefined)
        throw new Error(`no write of ${name}'s commit frame before its answer`);
      // A sync of the log that began after the frame was written and ended before the answer. The
      // checkpoint thread syncs the log too (a passive checkpoint does, first), and its sync may
      // overlap the store's own: any sync of the right span proves the frame durable.
      const synced =
        syncs.find((sync) => sync.start >= written.end && sync.end <= answer.start) ??
        syncs.find((sync) => sync.start >= written.end);
      checked.push({ name, written, synced, answer });
    }
  }
  return { checked, syncs, transactions: wal.transactions };
}

// Each case starts server processes (about a second of CPU each); under the whole suite's load a
// case has taken half the default 30 s.
describe.skipIf(noStrace)(
  'SQLite durability, counted from outside the server',
  { timeout: 60_000 },
  () => {
    it('synchronous=full by default: every answer leaves after its transaction was synced; one sync serves many', async () => {
      const traced = await startTraced('full', '');
      const { loadStart, loadEnd, walBytes } = await workload(traced);
      const events = await stopTraced(traced);
      const { checked, syncs, transactions } = answersAndSyncs(events, walBytes);
      // Every commit and grant was answered, each after a sync of its transaction had ended.
      const names = new Set(checked.map((c) => c.name));
      expect(names.size).toBe(ONE_AT_A_TIME + WAVES * WAVE_SIZE + WAVE_SIZE);
      for (const { name, synced, answer } of checked) {
        expect(synced, `${name} answered before any sync of its transaction`).toBeDefined();
        expect(synced!.end, `${name} answered before its sync ended`).toBeLessThanOrEqual(
          answer.start,
        );
      }
      // Under load, transactions and syncs are shared: fewer of either than commits.
      const loadSyncs = syncs.filter((s) => s.start >= loadStart && s.end <= loadEnd).length;
      expect(loadSyncs).toBeGreaterThanOrEqual(WAVES);
      expect(loadSyncs).toBeLessThan(WAVES * WAVE_SIZE);
      expect(transactions).toBeLessThan(ONE_AT_A_TIME + WAVES * WAVE_SIZE + WAVE_SIZE);
    });

    it('a batch of commits (POST /v1/commits) is one transaction and one sync of the log', async () => {
      const traced = await startTraced('batch', '');
      const reader = new Database(traced.db, { readonly: true });
      const grant = await traced.client.acquire({ scope: 'batch', holder: 'w', ttlMs: 3_600_000 });
      // Keeps every frame in the log (see workload), so each commit's frame can be found.
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM sqlite_master').get();
      const names = Array.from({ length: WAVE_SIZE }, (_, i) => nameOf('load', i));
      const start = Date.now() * 1000;
      const answers = await traced.client.commitMany(
        names.map((name) => ({
          scope: grant.scope,
          fence: grant.fence,
          operationId: name,
          writes: [{ name, expectRevision: 0, value: name }],
        })),
      );
      const end = Date.now() * 1000;
      expect(answers.every((a) => a.ok && a.result.outcome === 'committed')).toBe(true);
      const wal = readWal(readFileSync(traced.wal));
      reader.exec('COMMIT');
      reader.close();
      const events = await stopTraced(traced);
      // Every commit of the batch in the same transaction: one commit frame holds them all.
      const frames = new Set(names.map((name) => wal.commitFrameOf(name)?.offset));
      expect(frames.size).toBe(1);
      expect(frames.has(undefined)).toBe(false);
      // One sync of the log answered the batch (a checkpoint thread's syncs are not the store's).
      const checkpointing = new Set(
        events.filter((e) => e.name === 'pwrite64' && e.path.endsWith('.db')).map((e) => e.pid),
      );
      const syncs = events.filter(
        (e) =>
          /^f(data)?sync$/.test(e.name) &&
          e.path.endsWith('-wal') &&
          !checkpointing.has(e.pid) &&
          e.start >= start &&
          e.end <= end,
      );
      expect(syncs).toHaveLength(1);
    });

    it('synchronous=normal (opt-out): commits are written to the WAL but never synced', async () => {
      const traced = await startTraced('normal', '?synchronous=normal');
      const { walBytes } = await workload(traced);
      const events = await stopTraced(traced);
      const { checked, syncs } = answersAndSyncs(events, walBytes);
      expect(new Set(checked.map((c) => c.name)).size).toBe(
        ONE_AT_A_TIME + WAVES * WAVE_SIZE + WAVE_SIZE,
      );
      // No sync between the workload's first write and its last answer (shutdown checkpoints later),
      // but a checkpoint's: a passive checkpoint syncs the log before it copies pages back into the
      // database file, on a thread that answers nobody. Threads that write the database file are
      // checkpointing; their syncs are not counted.
      const checkpointing = new Set(
        events.filter((e) => e.name === 'pwrite64' && e.path.endsWith('.db')).map((e) => e.pid),
      );
      const firstWrite = Math.min(...checked.map((c) => c.written.start));
      const lastAnswer = Math.max(...checked.map((c) => c.answer.start));
      expect(
        syncs.filter(
          (s) => !checkpointing.has(s.pid) && s.start >= firstWrite && s.start <= lastAnswer,
        ),
      ).toEqual([]);
    });
  },
);
