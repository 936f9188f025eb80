/**
 * Durable answers without blocking the event loop. Under synchronous=FULL SQLite syncs the WAL
 * inside COMMIT, on the calling thread: in Node that stops every request, timer and lease renewal
 * of the process for the length of a disk flush, once per transaction. So a store opened FULL runs
 * its connection at NORMAL (the WAL is written at COMMIT, synced only at checkpoints) and syncs the
 * WAL itself, with fdatasync on libuv's thread pool, before it answers anything.
 *
 * Why this keeps FULL's promise: an answer waits for a sync that began after every transaction this
 * process committed before the answer; fdatasync flushes the whole file, whoever wrote it; and WAL
 * frames are replayed in order, so a synced frame implies every frame before it. While one sync
 * runs, the next transactions commit and wait for the next sync, which then serves all of them.
 * What another process sharing the file may see: a commit of this process before its sync ends
 * (never an answer of this process); every write of that process is answered after a sync of its
 * own, which covers the frames it read (docs/semantics.md, "Durability").
 */
import {
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  openSync,
  readdirSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { FencegateError } from '../../errors.js';

/** fs.fdatasync's shape: the sync to run on the thread pool (a test passes one that fails). */
export type SyncFile = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

interface Waiter {
  /** The count of committed transactions this waiter needs synced. */
  through: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class WalSync {
  readonly #fd: number;
  readonly #sync: SyncFile;
  /** Transactions committed on this connection so far. */
  #committed = 0;
  /** Transactions a completed sync covered. */
  #synced = 0;
  #syncing = false;
  #waiters: Waiter[] = [];
  /** Set when a sync failed: from then on nothing more can be promised durable. */
  #failure: FencegateError | null = null;
  #closed = false;
  #onIdle: (() => void) | null = null;

  /**
   * Opens the WAL of `databasePath` (the connection must already be in WAL mode and have written)
   * and makes the file and its directory entry durable once, as SQLite's first sync would. SQLite
   * resolves a symlinked path and keeps its log beside the real file, so the path is resolved
   * here too: a `-wal` beside the link is not SQLite's (absent, or a stale leftover). Then the file
   * opened must be the one SQLite has open, or the store would answer after syncing another file.
   */
  constructor(databasePath: string, sync: SyncFile = fdatasync) {
    this.#sync = sync;
    const realPath = realpathSync(databasePath);
    const walPath = `${realPath}-wal`;
    this.#fd = openSync(walPath, constants.O_RDWR);
    try {
      requireOpenElsewhere(this.#fd, walPath);
      fdatasyncSync(this.#fd);
      const directory = openSync(dirname(realPath), constants.O_RDONLY);
      try {
        fsyncSync(directory);
      } finally {
        closeSync(directory);
      }
    } catch (error) {
      closeSync(this.#fd);
      throw error;
    }
  }

  /** Called after each committed write transaction: starts a sync now unless one is running. */
  committed(): void {
    this.#committed++;
    if (!this.#syncing) this.#startSync();
  }

  /**
   * Settles once every transaction committed so far is on disk, or rejects with outcome_unknown
   * if a sync failed: the transaction is in the log but may not survive a power loss.
   */
  durable(): Promise<void> | null {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#synced >= this.#committed) return null;
    const through = this.#committed;
    return new Promise((resolve, reject) => this.#waiters.push({ through, resolve, reject }));
  }

  /** Whether a sync has failed; the store then refuses everything (fail closed). */
  get failed(): boolean {
    return this.#failure !== null;
  }

  /**
   * Closes the WAL's descriptor: now when no sync runs (null), else once the running sync has
   * answered its waiters (a promise).
   */
  close(): Promise<void> | null {
    if (this.#closed) return null;
    this.#closed = true;
    if (!this.#syncing) {
      closeSync(this.#fd);
      return null;
    }
    return new Promise<void>((resolve) => (this.#onIdle = resolve)).then(() => closeSync(this.#fd));
  }

  #startSync(): void {
    const through = this.#committed;
    this.#syncing = true;
    this.#sync(this.#fd, (error) => {
      this.#syncing = false;
      if (error !== null) this.#fail(error);
      else this.#synced = through;
      this.#answer();
      if (this.#failure === null && this.#synced < this.#committed) this.#startSync();
      else this.#onIdle?.();
    });
  }

  #answer(): void {
    const waiting: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (this.#failure !== null) waiter.reject(this.#failure);
      else if (waiter.through <= this.#synced) waiter.resolve();
      else waiting.push(waiter);
    }
    this.#waiters = waiting;
  }

  /** The refusal of every operation after a failed sync: the store must be reopened. */
  get failure(): FencegateError | null {
    return this.#failure === null
      ? null
      : new FencegateError(
          'store_unavailable',
          'the SQLite store is unavailable: a sync of its log failed earlier, so no change can be promised durable any more; restart the server (reopen the store), then read the outcomes in doubt',
        );
  }

  #fail(cause: Error): void {
    this.#failure = new FencegateError(
      'outcome_unknown',
      'the SQLite store could not sync its log to disk; the change is written but may not survive a power loss; read the outcome after a restart',
      {},
      { cause },
    );
  }
}

/** Where a process lists its open files (Linux); elsewhere the check below is skipped. */
const OPEN_FILES = '/proc/self/fd';

/**
 * Throws unless another descriptor of this process (SQLite's) has the same file open as `fd`: the
 * same device and inode, whatever path reached it.
 */
function requireOpenElsewhere(fd: number, walPath: string): void {
  let descriptors: string[];
  try {
    descriptors = readdirSync(OPEN_FILES);
  } catch {
    return;
  }
  const ours = fstatSync(fd);
  for (const name of descriptors) {
    if (Number(name) === fd) continue;
    try {
      const other = statSync(`${OPEN_FILES}/${name}`);
      if (other.dev === ours.dev && other.ino === ours.ino) return;
    } catch {
      // Closed since the listing (or not a file): not SQLite's log.
    }
  }
  throw new FencegateError(
    'store_unavailable',
    `the SQLite store is unavailable: ${walPath} is not the log SQLite writes, so syncing it would not make commits durable; check how the database path is mounted or linked`,
  );
}
