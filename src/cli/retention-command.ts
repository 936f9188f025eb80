/**
 * `fencegate retention`: deletes stored outcomes older than a window, audit entries below a
 * verified checkpoint (optionally exported first) and rollouts finished longer ago than a window
 * (30 days unless told), on a store opened directly; a running server's store works too. Run it
 * from cron, or let `fencegate serve --keep-outcomes` prune outcomes.
 */
import { loadCheckpoint } from '../audit/checkpoint.js';
import { applyRetention } from '../retention/retention.js';
import { parseDuration, parseOutcomeWindow } from '../retention/duration.js';
import { DEFAULT_ROLLOUT_RETENTION_MS } from '../retention/rollout-retention.js';
import { redactUrl } from '../store/open.js';
import { EXIT_OK, UsageError, type CliIo, type Command, type FlagValues } from './command.js';
import { cliStoreUrl, OPEN_STORE_FLAGS, openCliStore, storeFlagsUsage } from './cli-store.js';

const USAGE = `Usage: fencegate retention [--store URL] [--create-store] [--keep-outcomes DURATION]
                           [--checkpoint FILE [--export FILE]] [--keep-rollouts DURATION]

Deletes what a store no longer needs to keep, in short transactions while it serves:

  --keep-outcomes DURATION  delete stored commit outcomes older than DURATION, at least 1h (7d, 12h).
                            A commit that repeats such an operationId is a new operation: its
                            checks run again (docs/semantics.md, Retention).
  --checkpoint FILE         delete audit entries through the last seq of this verify checkpoint
                            (fencegate verify --checkpoint FILE, every tenant, no violation);
                            verify continues from it afterwards
  --export FILE             append those audit entries to FILE as JSON lines first
  --keep-rollouts DURATION  delete rollouts completed or rolled back longer ago than DURATION
                            (default 30d), with what they recorded per scope; their cutovers and
                            audit entries stay (docs/rollout.md, Storage)
${storeFlagsUsage(28)}
  -h, --help                show this help
`;

export const retentionCommand: Command = {
  name: 'retention',
  summary: 'delete old stored outcomes and verified audit entries',
  usage: USAGE,
  flags: {
    store: { type: 'string' },
    ...OPEN_STORE_FLAGS,
    'keep-outcomes': { type: 'string' },
    'keep-rollouts': { type: 'string' },
    checkpoint: { type: 'string' },
    export: { type: 'string' },
  },
  run: retention,
};

async function retention(flags: FlagValues, io: CliIo): Promise<number> {
  const url = cliStoreUrl(flags, io);
  const keep = flags['keep-outcomes'];
  const keepRollouts = flags['keep-rollouts'];
  const checkpointPath = flags.checkpoint;
  const exportFile = flags.export;
  if (
    typeof keep !== 'string' &&
    typeof checkpointPath !== 'string' &&
    typeof keepRollouts !== 'string'
  ) {
    throw new UsageError(
      'say what to delete: --keep-outcomes DURATION, --checkpoint FILE, --keep-rollouts DURATION, or several',
    );
  }
  if (typeof exportFile === 'string' && typeof checkpointPath !== 'string') {
    throw new UsageError('--export needs --checkpoint: it exports the entries that are pruned');
  }
  const outcomeRetentionMs =
    typeof keep === 'string' ? usage(() => parseOutcomeWindow(keep)) : undefined;
  const rolloutRetentionMs =
    typeof keepRollouts === 'string'
      ? usage(() => parseDuration(keepRollouts))
      : DEFAULT_ROLLOUT_RETENTION_MS;
  const auditCheckpoint =
    typeof checkpointPath === 'string' ? await existingCheckpoint(checkpointPath) : undefined;
  const store = await openCliStore(flags, io);
  try {
    const result = await applyRetention(store, {
      ...(outcomeRetentionMs === undefined ? {} : { outcomeRetentionMs }),
      ...(auditCheckpoint === undefined ? {} : { auditCheckpoint }),
      ...(typeof exportFile === 'string' ? { exportFile } : {}),
      rolloutRetentionMs,
    });
    io.stdout(
      `fencegate retention on ${redactUrl(url)}: ${result.outcomesDeleted} stored outcomes deleted, ` +
        `${result.auditDeleted} audit entries deleted (${result.auditExported} exported); ` +
        `the audit log starts after seq ${result.auditPrunedThrough}; ` +
        `${result.rolloutsDeleted} finished rollouts deleted\n`,
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function existingCheckpoint(path: string) {
  const checkpoint = await loadCheckpoint(path);
  if (checkpoint === null) {
    throw new UsageError(`no checkpoint at ${path}: write one with fencegate verify --checkpoint`);
  }
  return checkpoint;
}

function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
