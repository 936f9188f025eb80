/**
 * Interleaving exploration on top of fast-check's scheduler (`fc.scheduler()`).
 *
 * A scenario names a few workers, each a list of async steps (read, commit, renew ...). fast-check
 * picks the order in which steps of different workers run; the steps of one worker always run in
 * their own order, and a step runs to its end before any other step starts, so every run is one
 * well-defined interleaving. A failing run prints the scheduler's order and the seed that replays it.
 *
 *   await exploreInterleavings({
 *     setup: async () => ({ gate: await openGate() }),
 *     workers: (ctx) => ({ A: [readA, commitA], B: [readB, commitB] }),
 *     check: async (ctx, trace) => { ... },
 *     teardown: async (ctx) => ctx.gate.close(),
 *   }, { numRuns: 50 });
 */
import type { Parameters, Scheduler } from 'fast-check';
import { loadWithFastCheck } from './optional-peer.js';

export type WorkerStep = (() => Promise<unknown>) | { label: string; run: () => Promise<unknown> };

/** Worker name → its steps, in order. */
export type Workers = Record<string, readonly WorkerStep[]>;

export interface InterleavingTrace {
  /** `worker:label` of every step, in the order they ran. */
  readonly order: readonly string[];
}

/**
 * What runInterleaved needs of a scheduler: fast-check's `fc.scheduler()` (the one
 * exploreInterleavings passes) has this shape.
 */
export interface InterleavingScheduler {
  scheduleSequence(sequence: { label: string; builder: () => Promise<unknown> }[]): {
    task: Promise<unknown>;
  };
  waitFor<T>(task: Promise<T>): Promise<T>;
}

export class InterleavedStepError extends Error {
  override readonly name = 'InterleavedStepError';
}

/**
 * Runs every worker's steps interleaved in the order the scheduler picks and resolves once all of
 * them finished. A step that throws stops its worker and fails the run: a step that expects a
 * rejection catches it itself and records what it saw.
 */
export async function runInterleaved(
  scheduler: InterleavingScheduler,
  workers: Workers,
): Promise<InterleavingTrace> {
  const order: string[] = [];
  const failures: InterleavedStepError[] = [];
  const sequences = Object.entries(workers).map(([worker, steps]) =>
    scheduler.scheduleSequence(
      steps.map((step, index) => {
        const label = typeof step === 'function' ? `step${index + 1}` : step.label;
        const run = typeof step === 'function' ? step : step.run;
        const name = `${worker}:${label}`;
        return {
          label: name,
          builder: async () => {
            order.push(name);
            try {
              await run();
            } catch (error) {
              failures.push(new InterleavedStepError(`step ${name} failed`, { cause: error }));
              throw error;
            }
          },
        };
      }),
    ),
  );
  await scheduler.waitFor(Promise.all(sequences.map((sequence) => sequence.task)));
  const [firstFailure] = failures;
  if (firstFailure !== undefined) throw firstFailure;
  return { order };
}

export interface InterleavingScenario<Ctx> {
  /** Builds a fresh world for one run (a store, scopes, grants). */
  setup(): Promise<Ctx>;
  /** The workers of one run; closures keep each worker's local state. */
  workers(ctx: Ctx): Workers;
  /** Inspects the authoritative state once every worker finished. Throw (or expect) to fail. */
  check(ctx: Ctx, trace: InterleavingTrace): Promise<void> | void;
  teardown?(ctx: Ctx): Promise<void>;
}

export interface ExploreOptions {
  /** Interleavings to try; 25 by default. */
  numRuns?: number;
  /** Replays a reported failure. */
  seed?: number;
  path?: string;
}

/** Runs a scenario under many scheduler orders; a failure reports the order and the seed. */
export async function exploreInterleavings<Ctx>(
  scenario: InterleavingScenario<Ctx>,
  options: ExploreOptions = {},
): Promise<void> {
  const { fc, assertProperty } = await loadWithFastCheck(
    () => import('./property.js'),
    'exploreInterleavings',
  );
  const parameters: Parameters<[Scheduler]> = { numRuns: options.numRuns ?? 25 };
  if (options.seed !== undefined) parameters.seed = options.seed;
  if (options.path !== undefined) parameters.path = options.path;
  const property = fc.asyncProperty(fc.scheduler(), async (scheduler) => {
    const ctx = await scenario.setup();
    try {
      const trace = await runInterleaved(scheduler, scenario.workers(ctx));
      await scenario.check(ctx, trace);
    } finally {
      await scenario.teardown?.(ctx);
    }
  });
  await assertProperty(
    property,
    parameters,
    (seed, path) => `exploreInterleavings(scenario, { seed: ${seed}, path: '${path}' })`,
    'an interleaving failed',
  );
}
