/**
 * What the demo commands share: their flags' integer parsing, the store they open (group commit,
 * generous deadlines), the progress lines on stderr, how a failed run is explained, and the
 * standalone entry that tests call with the words after the command's name.
 */
import { performance } from 'node:perf_hooks';
import type { DemoProgress } from '../demo/demo-types.js';
import { isFencegateError } from '../errors.js';
import { Fencegate } from '../gate.js';
import { openStore, redactUrl } from '../store/open.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  parseFlags,
  UsageError,
  type CliIo,
  type Command,
  type FlagValues,
} from './command.js';

export const DEFAULT_DEMO_STORE = 'sqlite::memory:';
export const MAX_WORKFLOWS = 1_000_000;

export interface DemoIo extends CliIo {
  /** Live progress on a terminal; one line per phase otherwise. */
  stderrIsTTY?: boolean;
}

/** One demo command: how it is named in messages and what it suggests when a store is slow. */
export interface DemoCommandSpec {
  /** `fencegate demo`, `fencegate demo rollout`. */
  label: string;
  /** The flags of a smaller run, suggested when the store did not answer in time. */
  smallerRun: string;
  tenant: string;
}

/**
 * The demo sends thousands of operations at once; on a loaded machine a server's deadlines (etcd:
 * 1.5 s a call) would fail it. Its caller waits anyway, so it allows more.
 */
const DEMO_DEADLINES = { callMs: 10_000, operationMs: 30_000 };

/** Why the demo stopped; a store that did not answer gets what a demo user can do about it. */
export function failureText(error: unknown, smallerRun: string): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!isFencegateError(error)) return message;
  if (error.code !== 'store_unavailable' && error.code !== 'outcome_unknown') return message;
  return (
    `${message}\nThe store did not answer in time, or could not be reached. Check that it runs ` +
    `and that --store names it; on a loaded machine, run the demo again on a fresh store with ` +
    `fewer workflows (${smallerRun}).`
  );
}

export function integerFlag(
  flags: FlagValues,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export function storeFlag(flags: FlagValues): string {
  return typeof flags.store === 'string' ? flags.store : DEFAULT_DEMO_STORE;
}

async function openDemoGate(url: string, tenant: string): Promise<Fencegate> {
  // Group commit: the demo's concurrent commits share transactions, as they do in the server.
  let store;
  try {
    store = await openStore(url, { groupCommit: true, deadlines: DEMO_DEADLINES });
  } catch (error) {
    if (isFencegateError(error) && error.code === 'invalid_request') {
      throw new UsageError(error.message);
    }
    throw error;
  }
  return Fencegate.open({ store, tenant });
}

/**
 * Opens the store, runs the scenario and prints its result; exit 0 when every invariant holds.
 * A scenario that could not run (a store that already holds it, a store fault) exits 1, not a
 * usage error, whichever entry point called.
 */
export async function runOnDemoStore<R extends { ok: boolean }>(
  spec: DemoCommandSpec,
  url: string,
  io: DemoIo,
  run: (gate: Fencegate, onProgress: (progress: DemoProgress) => void) => Promise<R>,
  print: (result: R, storeLabel: string) => string,
): Promise<number> {
  const gate = await openDemoGate(url, spec.tenant);
  try {
    let result: R;
    try {
      result = await run(gate, progressPrinter(io));
    } catch (error) {
      io.stderr(`${spec.label}: ${failureText(error, spec.smallerRun)}\n`);
      return EXIT_FAILURE;
    }
    io.stdout(print(result, redactUrl(url)));
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await gate.close();
  }
}

/** Standalone entry: parses argv (the words after the command's name) and runs the command. */
export async function runStandalone(
  command: Command,
  spec: DemoCommandSpec,
  argv: string[],
  io: DemoIo,
): Promise<number> {
  try {
    const flags = parseFlags(argv, command.flags);
    if (flags.help === true) {
      io.stdout(command.usage);
      return EXIT_OK;
    }
    return await command.run(flags, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`${spec.label}: ${error.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    io.stderr(`${spec.label}: ${failureText(error, spec.smallerRun)}\n`);
    return EXIT_FAILURE;
  }
}

/** Progress goes to stderr so stdout stays the table (or the JSON). */
function progressPrinter(io: DemoIo): (progress: DemoProgress) => void {
  let started = performance.now();
  return ({ phase, done, total }) => {
    if (done === 0) started = performance.now();
    const counts = total > 1 ? ` ${done}/${total}` : '';
    if (io.stderrIsTTY === true) {
      io.stderr(`\r\u001b[2K  ${phase}${counts}`);
      if (done === total) io.stderr(` (${Math.round(performance.now() - started)} ms)\n`);
    } else if (done === total) {
      io.stderr(`demo: ${phase}${counts} (${Math.round(performance.now() - started)} ms)\n`);
    }
  };
}

export function processIo(): DemoIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stderrIsTTY: process.stderr.isTTY === true,
  };
}
