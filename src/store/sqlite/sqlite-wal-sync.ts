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
import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync, constants } from 'node:fs';
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
   * and makes the file and its directory entry durable once, as SQLite's first sync would.
   */
  constructor(databasePath: string, sync: SyncFile = fdatasync) {
    this.#sync = sync;
    this.#fd = openSync(`${databasePath}-wal`, constants.O_RDWR);
    fdatasyncSync(this.#fd);
    const directory = openSync(dirname(databasePath), constants.O_RDONLY);
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
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

  #fail(cause: Error): void {
    this.#failure = new FencegateError(
      'outcome_unknown',
      'the SQLite store could not sync its log to disk; the change is written but may not survive a power loss; read the outcome after a restart',
      {},
      { cause },
    );
  }
}
