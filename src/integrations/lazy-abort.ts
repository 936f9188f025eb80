/**
 * An abort whose AbortController is made only when its signal is read. Node's AbortController costs
 * microseconds to make and to abort (an EventTarget, the abort event), and a reason built as an
 * Error captures a stack; a queue worker makes and ends one per job, and most jobs never read
 * theirs. Aborting before the signal is read only keeps the reason, built when first needed.
 */
export class LazyAbort {
  #controller: AbortController | null = null;
  #reason: Error | (() => Error) | null = null;

  get aborted(): boolean {
    return this.#reason !== null;
  }

  /** Why it aborted (undefined while it has not). */
  get reason(): Error | undefined {
    if (typeof this.#reason === 'function') this.#reason = this.#reason();
    return this.#reason ?? undefined;
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }

  /** Aborts once; later calls keep the first reason. `reason` may be a function building it. */
  abort(reason: Error | (() => Error)): void {
    if (this.#reason !== null) return;
    this.#reason = reason;
    if (this.#controller !== null) this.#controller.abort(this.reason);
  }

  throwIfAborted(): void {
    const reason = this.reason;
    if (reason !== undefined) throw reason;
  }
}
