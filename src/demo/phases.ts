/** A demo's phases, each timed and reported as progress (done of total) while it runs. */
import { performance } from 'node:perf_hooks';
import type { DemoProgress, PhaseTiming } from './demo-types.js';

export class Phases {
  readonly timings: PhaseTiming[] = [];
  readonly #onProgress: ((progress: DemoProgress) => void) | undefined;

  constructor(onProgress: ((progress: DemoProgress) => void) | undefined) {
    this.#onProgress = onProgress;
  }

  async run<T>(
    phase: string,
    total: number,
    work: (tick: (done: number) => void) => Promise<T>,
  ): Promise<T> {
    const start = performance.now();
    let last = -1;
    const tick = (done: number): void => {
      if (done === last) return;
      last = done;
      this.#onProgress?.({ phase, done, total });
    };
    tick(0);
    const result = await work(tick);
    tick(total);
    this.timings.push({ phase, ms: Math.round(performance.now() - start) });
    return result;
  }
}
