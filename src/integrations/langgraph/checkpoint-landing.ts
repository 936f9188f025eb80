/**
 * Which checkpoints are stored, so that an effect commits with or after the checkpoint its step
 * ran from, never before. Under durability `async` LangGraph stores a step's checkpoint while the
 * step's tasks already run, and a fast task's writes may be asked for before that checkpoint is:
 * a commit carrying effects then waits until the checkpoint landed (this saver's own `put`
 * committed it, or the store has it), and fails with that `put` when it is refused.
 */
import { FencegateError } from '../../errors.js';

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Checkpoints remembered as stored; older ones are read from the store again if asked for. */
const REMEMBERED = 512;
const POLL_MS = 50;

export class CheckpointLanding {
  readonly #landed = new Set<string>();
  readonly #waiting = new Map<string, Waiter>();
  readonly #timeoutMs: number;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** This saver's `put` of the checkpoint committed. */
  landed(key: string): void {
    this.#landed.add(key);
    if (this.#landed.size > REMEMBERED) {
      const [oldest] = this.#landed;
      if (oldest !== undefined) this.#landed.delete(oldest);
    }
    this.#waiting.get(key)?.resolve();
    this.#waiting.delete(key);
  }

  /** This saver's `put` of the checkpoint was refused: effects waiting for it fail the same way. */
  refused(key: string, error: unknown): void {
    this.#waiting.get(key)?.reject(error);
    this.#waiting.delete(key);
  }

  /** Resolves once the checkpoint is stored; `stored` asks the store. */
  async waitFor(key: string, stored: () => Promise<boolean>): Promise<void> {
    if (this.#landed.has(key)) return;
    const waiter = this.#waiter(key);
    const until = Date.now() + this.#timeoutMs;
    for (;;) {
      if (await stored()) return;
      const pause = new Promise<'poll'>((resolve) => setTimeout(() => resolve('poll'), POLL_MS));
      if ((await Promise.race([waiter.promise, pause])) !== 'poll') return;
      if (Date.now() > until) {
        throw new FencegateError(
          'invalid_request',
          `the checkpoint ${key.split('\0').pop()} a task's effects come from was never stored; an effect commits only with or after the checkpoint its step ran from`,
          { field: 'configurable.checkpoint_id' },
        );
      }
    }
  }

  #waiter(key: string): Waiter {
    const existing = this.#waiting.get(key);
    if (existing !== undefined) return existing;
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    // A refused put nobody waits for must not surface as an unhandled rejection.
    promise.catch(() => undefined);
    const waiter = { promise, resolve, reject };
    this.#waiting.set(key, waiter);
    return waiter;
  }
}
