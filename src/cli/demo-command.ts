/**
 * `fencegate demo`: replays the policy-cutover incident on a store (an embedded in-memory SQLite
 * store unless told otherwise), prints what happened and the cutover report, and exits 1 when a
 * required observation does not hold. Exit codes: 0 every invariant holds, 1 an invariant failed
 * or the demo could not run, 2 called wrongly.
 */
import { formatDemoTable } from '../demo/table.js';
import {
  DEFAULT_JOBS,
  DEFAULT_SEED,
  DEFAULT_WORKFLOWS,
  runIncidentDemo,
} from '../demo/incident.js';
import type { Command, FlagValues } from './command.js';
import {
  DEFAULT_DEMO_STORE,
  integerFlag,
  MAX_WORKFLOWS,
  processIo,
  runOnDemoStore,
  runStandalone,
  storeFlag,
  type DemoCommandSpec,
  type DemoIo,
} from './demo-run.js';

export type { DemoIo } from './demo-run.js';

/** The tenant the demo writes to, so a shared store keeps its data apart. */
export const DEMO_TENANT = 'demo';
const SPEC: DemoCommandSpec = {
  label: 'fencegate demo',
  smallerRun: '--workflows 1000 --jobs 100',
  tenant: DEMO_TENANT,
};

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
export function runDemo(argv: string[], io: DemoIo = processIo()): Promise<number> {
  return runStandalone(demoCommand, SPEC, argv, io);
}

async function demo(flags: FlagValues, io: DemoIo): Promise<number> {
  const url = storeFlag(flags);
  const workflows = integerFlag(flags, 'workflows', DEFAULT_WORKFLOWS, 1, MAX_WORKFLOWS);
  const jobs = integerFlag(flags, 'jobs', Math.min(DEFAULT_JOBS, workflows), 1, workflows);
  const seed = integerFlag(flags, 'seed', DEFAULT_SEED, 0, 0xffffffff);
  return await runOnDemoStore(
    SPEC,
    url,
    io,
    (gate, onProgress) => runIncidentDemo({ gate, workflows, jobs, seed, onProgress }),
    (result, storeLabel) =>
      flags.json === true
        ? `${JSON.stringify({ storeUrl: storeLabel, ...result }, null, 2)}\n`
        : formatDemoTable(result, storeLabel),
  );
}
