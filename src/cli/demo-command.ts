/**
 * `fencegate demo`: replays the policy-cutover incident on a store (an embedded in-memory SQLite
 * store unless told otherwise), prints what happened and the cutover report, and exits 1 when a
 * required observation does not hold. Exit codes: 0 every invariant holds, 1 an invariant failed
 * or the demo could not run, 2 called wrongly.
 */
import { performance } from 'node:perf_hooks';
import { formatDemoTable } from '../demo/table.js';
import type { DemoProgress } from '../demo/demo-types.js';
import {
  DEFAULT_JOBS,
  DEFAULT_SEED,
  DEFAULT_WORKFLOWS,
  runIncidentDemo,
} from '../demo/incident.js';
import { Fencegate } from '../gate.js';
import { isFencegateError } from '../errors.js';
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

/** The tenant the demo writes to, so a shared store keeps its data apart. */
export const DEMO_TENANT = 'demo';
const DEFAULT_DEMO_STORE = 'sqlite::memory:';
const MAX_WORKFLOWS = 1_000_000;

const USAGE = `Usage: fencegate demo [--store URL] [--workflows N] [--jobs N] [--seed N] [--json]

Replays the policy-cutover incident: ${DEFAULT_WORKFLOWS} agent workflows, ${DEFAULT_JOBS} memory-compaction
jobs issued under policy v7 (80 running, 120 reserved, 400 queued), a cutover of
the affected workflows to v8, 30 resumed and 100 delayed v7 commits with old
fences, a v7 worker asking for a fresh lease, duplicated v8 deliveries, and the
v8 controller compacting every affected workflow. Then it checks from the store
that no stale commit landed and every required handoff fact survived, and
prints the cutover report.

Options:
  --store URL       store URL (default ${DEFAULT_DEMO_STORE}: embedded, gone after the run);
                    a sqlite:PATH store must not hold the demo's workflows yet
  --workflows N     agent workflows (default ${DEFAULT_WORKFLOWS})
  --jobs N          compaction jobs issued under v7 (default ${DEFAULT_JOBS}; the states keep
                    the incident's proportions)
  --seed N          which incident to replay: same seed, same run (default ${DEFAULT_SEED})
  --json            print the structured result as JSON
  -h, --help        show this help

Exit codes: 0 every invariant holds, 1 an invariant failed, 2 usage error.
`;

export interface DemoIo extends CliIo {
  /** Live progress on a terminal; one line per phase otherwise. */
  stderrIsTTY?: boolean;
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'replay the policy-cutover incident and check that no stale commit lands',
  usage: USAGE,
  flags: {
    store: { type: 'string' },
    workflows: { type: 'string' },
    jobs: { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'boolean' },
  },
  run: (flags, io) => demo(flags, io),
};

/** Standalone entry: parses argv (the words after `demo`) and runs the demo. */
export async function runDemo(argv: string[], io: DemoIo = processIo()): Promise<number> {
  try {
    const flags = parseFlags(argv, demoCommand.flags);
    if (flags.help === true) {
      io.stdout(USAGE);
      return EXIT_OK;
    }
    return await demo(flags, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`fencegate demo: ${error.message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    io.stderr(`fencegate demo: ${failureText(error)}\n`);
    return EXIT_FAILURE;
  }
}

/**
 * The demo sends thousands of operations at once; on a loaded machine a server's deadlines (etcd:
 * 1.5 s a call) would fail it. Its caller waits anyway, so it allows more.
 */
const DEMO_DEADLINES = { callMs: 10_000, operationMs: 30_000 };

/** Why the demo stopped; a store that did not answer gets what a demo user can do about it. */
function failureText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!isFencegateError(error)) return message;
  if (error.code !== 'store_unavailable' && error.code !== 'outcome_unknown') return message;
  return (
    `${message}\nThe store did not answer in time, or could not be reached. Check that it runs ` +
    `and that --store names it; on a loaded machine, run the demo again on a fresh store with ` +
    `fewer workflows (--workflows 1000 --jobs 100).`
  );
}

function integerFlag(flags: FlagValues, name: string, fallback: number, min: number, max: number) {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

async function openGate(url: string): Promise<Fencegate> {
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
  return Fencegate.open({ store, tenant: DEMO_TENANT });
}

async function demo(flags: FlagValues, io: DemoIo): Promise<number> {
  const url = typeof flags.store === 'string' ? flags.store : DEFAULT_DEMO_STORE;
  const workflows = integerFlag(flags, 'workflows', DEFAULT_WORKFLOWS, 1, MAX_WORKFLOWS);
  const jobs = integerFlag(flags, 'jobs', Math.min(DEFAULT_JOBS, workflows), 1, workflows);
  const seed = integerFlag(flags, 'seed', DEFAULT_SEED, 0, 0xffffffff);
  const gate = await openGate(url);
  try {
    let result: Awaited<ReturnType<typeof runIncidentDemo>>;
    try {
      result = await runIncidentDemo({
        gate,
        workflows,
        jobs,
        seed,
        onProgress: progressPrinter(io),
      });
    } catch (error) {
      // The scenario could not run (a store that already holds it, a store fault): exit 1,
      // not a usage error, whichever entry point called.
      io.stderr(`fencegate demo: ${failureText(error)}\n`);
      return EXIT_FAILURE;
    }
    io.stdout(
      flags.json === true
        ? `${JSON.stringify({ storeUrl: redactUrl(url), ...result }, null, 2)}\n`
        : formatDemoTable(result, redactUrl(url)),
    );
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await gate.close();
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

function processIo(): DemoIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stderrIsTTY: process.stderr.isTTY === true,
  };
}
