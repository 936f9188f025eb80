/**
 * What lets a dispatcher sleep between rounds without missing work: news of committed intents
 * (the library's in-process announcement, PostgreSQL's NOTIFY) end the sleep at once, and news
 * that arrive while a round is running make the next round start without sleeping. The poll
 * interval stays as the safety net for what no news covers (intents committed by another process
 * on SQLite, backoff that came due, claims that lapsed).
 */

/** An API that can tell when intents were committed for its tenant. */
export interface IntentWakeSource {
  /** Calls `listener` when intents were committed; returns the function that stops it. */
  watchIntents(listener: () => void): () => void;
}

export class WakeUp {
  #pending = false;
  #sleeping: AbortController | null = null;

  /** Intents were committed: end the current sleep, or skip the next one. */
  notify(): void {
    this.#pending = true;
    this.#sleeping?.abort();
  }

  /** A round is starting: its claim covers every announcement made before it. */
  roundStarts(): void {
    this.#pending = false;
  }

  /** Sleeps up to `ms`, less if news arrive or `stop` aborts; not at all if news came already. */
  async sleep(
    ms: number,
    stop: AbortSignal,
    sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    if (this.#pending) return;
    const sleeping = new AbortController();
    this.#sleeping = sleeping;
    try {
      await sleep(ms, AbortSignal.any([stop, sleeping.signal]));
    } finally {
      this.#sleeping = null;
    }
  }
}
