/**
 * `fencegate demo rollout`: replays a progressive rollout gone wrong on a store (an embedded
 * in-memory SQLite store unless told otherwise) and checks from the store that the rollback took
 * write authority away from v8's in-flight jobs. The last line printed is JSON. Exit codes: 0
 * every invariant holds, 1 an invariant failed or the demo could not run, 2 called wrongly.
 */
import { DEFAULT_IN_FLIGHT, type GateAction } from '../demo/rollout/plan.js';
import {
  DEFAULT_ROLLOUT_SEED,
  DEFAULT_ROLLOUT_WORKFLOWS,
  maxInFlight,
  runRolloutDemo,
} from '../demo/rollout/run.js';
import { parseRedisUrl } from '../demo/rollout/fleet/fleet-plan.js';
import { formatRolloutTable } from '../demo/rollout/table.js';
import { UsageError, type Command, type FlagValues } from './command.js';
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

/** Its own tenant, so both demos can run on one store. */
export const ROLLOUT_DEMO_TENANT = 'demo-rollout';
/** The smallest run: each step of the ramp must move a few scopes. */
const MIN_WORKFLOWS = 100;
const ACTIONS: readonly GateAction[] = ['rollback', 'pause'];

const SPEC: DemoCommandSpec = {
  label: 'fencegate demo rollout',
  smallerRun: '--workflows 1000',
  tenant: ROLLOUT_DEMO_TENANT,
};

/** The fleet's default size: its jobs run through real worker processes and Redis. */
const DEFAULT_FLEET_WORKFLOWS = 1_000;
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const USAGE = `Usage: fencegate demo rollout [--store URL] [--workflows N] [--in-flight N] [--seed N]
                               [--action rollback|pause] [--json]
       fencegate demo rollout --fleet [--redis URL] [--store URL] [--workflows N] [--seed N]
                               [--json]

Replays a progressive rollout gone wrong: ${DEFAULT_ROLLOUT_WORKFLOWS} agent workflows pinned to policy v7,
v8 ramped to 5 % and then 25 % of them by the rollout driver (as fencegate serve
runs it), v8's compaction jobs dropping handoff facts at 25 %, a handoff check
reporting those jobs failed, and the rollout's gate failing on them: the driver
rolls back by itself while ${DEFAULT_IN_FLIGHT} v8 jobs hold grants on moved scopes. Those jobs
then resume and commit. It checks from the store that none of their commits
landed, that every moved scope is back on v7 with a new fence, that the other
scopes are untouched and that the audit history verifies. The last line printed
is JSON: ok, moved, staleAttempts, staleAccepted, decisionToFencedMs (the gate's
decision until every moved scope is fenced), trigger ("gate"), gate, ...

Options:
  --store URL          store URL (default ${DEFAULT_DEMO_STORE}: embedded, gone after the run);
                       its tenant ${ROLLOUT_DEMO_TENANT} must not hold the demo's workflows yet
  --workflows N        agent workflows (default ${DEFAULT_ROLLOUT_WORKFLOWS}, at least ${MIN_WORKFLOWS})
  --in-flight N        v8 jobs in flight when the gate fails (default ${DEFAULT_IN_FLIGHT}, at most
                       a tenth of the workflows)
  --seed N             which run to replay: same seed, same run (default ${DEFAULT_ROLLOUT_SEED})
  --action ACTION      what the gate's failure does (the rollout's onFailure):
                       rollback (default), or pause, which stops the ramp but
                       fences nothing: the in-flight commits land and the
                       invariants fail (exit 1)
  --fleet              run the workers as a blue/green fleet instead: two BullMQ
                       worker processes per version on real Redis (a queue per
                       version, jobs handed back between them), the ramp and the
                       gate's rollback with jobs in flight (default ${DEFAULT_FLEET_WORKFLOWS} workflows)
  --redis URL          the Redis of --fleet (default ${DEFAULT_REDIS_URL})
  --json               print the whole structured result as one JSON line
  -h, --help           show this help

Exit codes: 0 every invariant holds, 1 an invariant failed, 2 usage error.
`;

export const demoRolloutCommand: Command = {
  name: 'demo rollout',
  summary: "replay a rollout gone wrong and check that its gate's rollback fences v8 out",
  usage: USAGE,
  flags: {
    store: { type: 'string' },
    workflows: { type: 'string' },
    'in-flight': { type: 'string' },
    seed: { type: 'string' },
    action: { type: 'string' },
    fleet: { type: 'boolean' },
    redis: { type: 'string' },
    json: { type: 'boolean' },
  },
  run: (flags, io) => demoRollout(flags, io),
};

/** Standalone entry: parses argv (the words after `demo rollout`) and runs the demo. */
export function runRolloutDemoCommand(argv: string[], io: DemoIo = processIo()): Promise<number> {
  return runStandalone(demoRolloutCommand, SPEC, argv, io);
}

function actionFlag(flags: FlagValues): GateAction {
  const raw = flags.action ?? 'rollback';
  const action = ACTIONS.find((known) => known === raw);
  if (action === undefined) throw new UsageError(`--action must be one of ${ACTIONS.join(', ')}`);
  return action;
}

async function demoRollout(flags: FlagValues, io: DemoIo): Promise<number> {
  if (flags.fleet === true) return await demoFleet(flags, io);
  if (flags.redis !== undefined) throw new UsageError('--redis goes with --fleet');
  const url = storeFlag(flags);
  const workflows = integerFlag(
    flags,
    'workflows',
    DEFAULT_ROLLOUT_WORKFLOWS,
    MIN_WORKFLOWS,
    MAX_WORKFLOWS,
  );
  const most = maxInFlight(workflows);
  const inFlight = integerFlag(flags, 'in-flight', Math.min(DEFAULT_IN_FLIGHT, most), 1, most);
  const seed = integerFlag(flags, 'seed', DEFAULT_ROLLOUT_SEED, 0, 0xffffffff);
  const action = actionFlag(flags);
  return await runOnDemoStore(
    SPEC,
    url,
    io,
    (gate, onProgress) => runRolloutDemo({ gate, workflows, inFlight, seed, action, onProgress }),
    (result, storeLabel) =>
      flags.json === true
        ? `${JSON.stringify({ storeUrl: storeLabel, ...result })}\n`
        : formatRolloutTable(result, storeLabel),
  );
}

/** `--fleet`: loads BullMQ (an optional peer) only when asked for. */
async function demoFleet(flags: FlagValues, io: DemoIo): Promise<number> {
  for (const flag of ['in-flight', 'action'] as const) {
    if (flags[flag] !== undefined) {
      throw new UsageError(
        `--${flag} does not go with --fleet: the fleet's v8 worker slots are its jobs in flight, and its gate rolls back`,
      );
    }
  }
  const url = storeFlag(flags);
  const redisUrl = typeof flags.redis === 'string' ? flags.redis : DEFAULT_REDIS_URL;
  try {
    parseRedisUrl(redisUrl);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const workflows = integerFlag(
    flags,
    'workflows',
    DEFAULT_FLEET_WORKFLOWS,
    MIN_WORKFLOWS,
    MAX_WORKFLOWS,
  );
  const seed = integerFlag(flags, 'seed', DEFAULT_ROLLOUT_SEED, 0, 0xffffffff);
  const { runFleetDemo } = await import('../demo/rollout/fleet/run-fleet.js');
  const { formatFleet } = await import('../demo/rollout/fleet/fleet-text.js');
  return await runOnDemoStore(
    SPEC,
    url,
    io,
    (gate, onProgress) => runFleetDemo({ gate, redisUrl, workflows, seed, onProgress }),
    (result, storeLabel) =>
      flags.json === true
        ? `${JSON.stringify({ storeUrl: storeLabel, ...result })}\n`
        : formatFleet(result, storeLabel),
  );
}
