/**
 * Where a test run keeps its temporary files: SQLite stores, etcd members' data, bundles, packed
 * tarballs. On a machine with a memory file system (/dev/shm) that has room, there, so an fsync
 * returns at once: the tests check what fencegate decides and which syncs it asks for (strace
 * counts them), not how fast a disk syncs, as PostgreSQL's synchronous_commit=off does for the
 * database. A process killed mid-write loses nothing either way: its writes are in the kernel's
 * page cache, which outlives the process on any file system.
 *
 * The global setup sets TMPDIR to a fresh directory under the root chosen here; the workers, their
 * child processes (servers, pytest, etcd) and os.tmpdir() all read it. FENCEGATE_TEST_TMPDIR
 * names a root of the caller's own; an empty value keeps the system's temporary directory.
 */
import {
  accessSync,
  chmodSync,
  constants,
  mkdtempSync,
  rmSync,
  statfsSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TEST_TMPDIR_ENV = 'FENCEGATE_TEST_TMPDIR';
/** The memory file system most Linux machines mount. */
export const MEMORY_ROOT = '/dev/shm';
/** Less free than this (a container's default /dev/shm is 64 MiB) and the disk is used instead. */
export const MIN_FREE_BYTES = 2 * 1024 ** 3;

/** The run's directory: the owner's; others may only pass through to what is made for them. */
export const RUN_DIR_MODE = 0o711;

export interface TempRootChoice {
  /** The directory under which the run's own directory is made. */
  root: string;
  /** Why this one, for the setup's log line. */
  why: string;
}

/** Free bytes for an unprivileged writer, or null when the path is no writable directory. */
export function freeBytes(path: string): number | null {
  try {
    if (!statSync(path).isDirectory()) return null;
    accessSync(path, constants.W_OK);
    const stats = statfsSync(path);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

export function chooseTempRoot(
  env: Record<string, string | undefined>,
  memoryRoot = MEMORY_ROOT,
  free: (path: string) => number | null = freeBytes,
): TempRootChoice {
  const given = env[TEST_TMPDIR_ENV];
  if (given !== undefined) {
    return given === ''
      ? { root: tmpdir(), why: `${TEST_TMPDIR_ENV} is empty` }
      : { root: given, why: `${TEST_TMPDIR_ENV}` };
  }
  const room = free(memoryRoot);
  if (room === null) return { root: tmpdir(), why: `no writable ${memoryRoot}` };
  if (room < MIN_FREE_BYTES) {
    const mib = Math.floor(room / 1024 ** 2);
    return { root: tmpdir(), why: `${memoryRoot} has ${mib} MiB free, under 2 GiB` };
  }
  return { root: memoryRoot, why: 'in memory' };
}

/**
 * Makes the run's temporary directory, points TMPDIR at it for everything started from here on,
 * and answers what was chosen and how to remove it.
 */
export function useTestTempDir(env: NodeJS.ProcessEnv = process.env): {
  path: string;
  why: string;
  remove: () => void;
} {
  const choice = chooseTempRoot(env);
  const path = mkdtempSync(join(choice.root, 'fencegate-tests-'));
  // Others may pass through but not list it, as a directory of /tmp allows: a throwaway
  // PostgreSQL cluster runs as the postgres user and must reach its own directory inside.
  chmodSync(path, RUN_DIR_MODE);
  const before = env.TMPDIR;
  env.TMPDIR = path;
  return {
    path,
    why: choice.why,
    remove: () => {
      if (before === undefined) delete env.TMPDIR;
      else env.TMPDIR = before;
      rmSync(path, { recursive: true, force: true });
    },
  };
}
