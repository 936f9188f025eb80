/**
 * Checkpoints off the event loop. SQLite folds the WAL back into the database file inside the
 * COMMIT that crosses `wal_autocheckpoint`, on the calling thread: it writes every page the log
 * holds to its place in the file and syncs the file. On a large store those pages lie scattered
 * over the file, and the event loop stood still for 100 ms and more, a delay every request in
 * flight paid. So once a connection has written `afterWrites` transactions (a CLI command never
 * gets there, and never pays for a thread), a worker thread with a connection of its own runs a
 * PASSIVE checkpoint at most every `everyMs` while writes come in. A PASSIVE checkpoint takes no
 * lock a writer needs and never waits for one, and it syncs the log before it copies a page, so
 * durability is as before. The connection's own autocheckpoint stays, at a larger bound, as the
 * safety net for a worker that falls behind, and at its usual bound again if the worker fails.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase, Synchronous } from './sqlite-database.js';
import { WAL_AUTOCHECKPOINT_PAGES } from './sqlite-database.js';

export interface CheckpointOptions {
  /**
   * Write transactions of the connection before the thread starts. Default 100: under group
   * commit a transaction is a whole batch, and a busy server reaches 100 within a second.
   */
  afterWrites?: number;
  /** Least time between two checkpoints, ms. Default 1,000. */
  everyMs?: number;
}

/** What a finished checkpoint reports (SQLite's `wal_checkpoint` row), or why it failed. */
export interface CheckpointReport {
  ok: boolean;
  /** Frames in the log, and frames of it now in the database file. */
  log?: number;
  checkpointed?: number;
  message?: string;
}

interface CheckpointerSetup {
  path: string;
  synchronous: Synchronous;
  /** The driver module the worker loads; a test names one that cannot load. */
  driver?: string;
}

const DEFAULT_AFTER_WRITES = 100;
const DEFAULT_EVERY_MS = 1000;
/** While the thread checkpoints, the connection folds the log itself only past this many pages. */
export const SAFETY_AUTOCHECKPOINT_PAGES = 4 * WAL_AUTOCHECKPOINT_PAGES;
/** How long close() waits for the thread to close its connection. */
const CLOSE_WAIT_MS = 10_000;

/**
 * The worker, as a CommonJS script: plain JavaScript runs alike from the sources and the build.
 * It answers each 'checkpoint' with a report; on 'close' it closes its connection, then raises
 * the shared flag the closing thread waits on.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const closed = new Int32Array(workerData.closed);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
db.pragma('synchronous = ' + workerData.synchronous);
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    Atomics.store(closed, 0, 1);
    Atomics.notify(closed, 0);
    parentPort.close();
    return;
  }
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, log: row.log, checkpointed: row.checkpointed });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message) });
  }
});
`;

export class Checkpointer {
  readonly #db: SqliteDatabase;
  readonly #setup: CheckpointerSetup;
  readonly #afterWrites: number;
  readonly #everyMs: number;
  /** Write transactions seen before the thread started. */
  #writes = 0;
  #worker: Worker | null = null;
  #closed: Int32Array | null = null;
  #inFlight = false;
  #lastAt = 0;
  /** Set once the thread failed: the connection checkpoints in COMMIT again, as before. */
  #failed = false;
  #onReport: ((report: CheckpointReport) => void) | null = null;

  constructor(db: SqliteDatabase, setup: CheckpointerSetup, options: CheckpointOptions = {}) {
    this.#db = db;
    this.#setup = setup;
    this.#afterWrites = options.afterWrites ?? DEFAULT_AFTER_WRITES;
    this.#everyMs = options.everyMs ?? DEFAULT_EVERY_MS;
  }

  /** Whether the thread runs the checkpoints now. */
  get running(): boolean {
    return this.#worker !== null && !this.#failed;
  }

  /** Called after each committed write transaction of the connection. */
  written(): void {
    if (this.#failed) return;
    if (this.#worker === null) {
      if (++this.#writes >= this.#afterWrites) this.#start();
      return;
    }
    const now = performance.now();
    if (this.#inFlight || now - this.#lastAt < this.#everyMs) return;
    this.#inFlight = true;
    this.#lastAt = now;
    this.#worker.postMessage('checkpoint');
  }

  /** Each report of the thread, as it arrives (for tests and diagnostics). */
  onReport(listener: (report: CheckpointReport) => void): void {
    this.#onReport = listener;
  }

  /**
   * Closes the thread's connection before returning, so that the caller's connection, closed
   * next, is the last one on the file (SQLite then folds the log back and removes it, as it did
   * without the thread). Waits for a checkpoint in progress to finish.
   */
  close(): void {
    const worker = this.#worker;
    const closed = this.#closed;
    this.#worker = null;
    if (worker === null || closed === null) return;
    if (!this.#failed) {
      worker.postMessage('close');
      Atomics.wait(closed, 0, 0, CLOSE_WAIT_MS);
    }
    void worker.terminate();
  }

  #start(): void {
    const closed = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path: this.#setup.path,
        synchronous: this.#setup.synchronous,
        driver: this.#setup.driver ?? createRequire(import.meta.url).resolve('better-sqlite3'),
        closed: closed.buffer,
      },
    });
    // The thread never keeps the process alive; close() ends it.
    worker.unref();
    worker.on('message', (report: CheckpointReport) => {
      this.#inFlight = false;
      this.#onReport?.(report);
    });
    worker.on('error', () => this.#fail());
    worker.on('exit', () => {
      if (this.#worker === worker) this.#fail();
    });
    this.#worker = worker;
    this.#closed = closed;
    this.#lastAt = performance.now();
    this.#db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
  }

  /** The thread died: checkpoints go back into COMMIT, at the usual bound. */
  #fail(): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#inFlight = false;
    if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  }
}
