/**
 * `fencegate rollout start | status | advance | pause | resume | promote | rollback | report`: an
 * operator's progressive rollouts over HTTP (docs/rollout.md), through `FencegateClient.rollouts`.
 */
import { readFileSync } from 'node:fs';
import type { Rollout, RolloutCommand, RolloutGate, StartRolloutRequest } from '../types.js';
import { requiredString, UsageError, type FlagValues } from './command.js';
import { quoted } from './echo.js';
import { httpCommand, integerOption, type HttpAnswer } from './http-command.js';
import { reportText, rolloutLine } from './rollout-text.js';

const REVISION_USAGE = `  --revision N       apply only if the rollout is still at revision N (as status printed it);
                     otherwise it is refused with rollout_conflict and nothing changes`;

export const rolloutStartCommand = httpCommand({
  name: 'rollout start',
  summary: 'start a progressive rollout of a policy and move its first step (operator)',
  usage: `Usage: fencegate rollout start ROLLOUT_ID --from V --to V (--prefix P | --scope S...)
                             --steps 5,25,50,100 [--controller H] [--reason TEXT]
                             [--hold SECONDS[,SECONDS...]] [--hold-extension SECONDS]
                             [--gates FILE] [--on-failure rollback|pause]
                             [--url URL] [--token T] [--json]

Ramps the scopes of a prefix, or of the scopes listed, from policy version V (--from) to V (--to),
both registered: each step moves the share of the selection its percent admits. The first step
moves now; the same start again resumes it.

Options:
  --from V           the version the scopes run now
  --to V             the version to ramp to
  --prefix P         every scope whose name starts with P
  --scope S          a scope (repeatable, up to 1,000); give --prefix or --scope, not both
  --steps LIST       increasing percentages separated by commas, each 1 to 100
  --controller H     holds the moved scopes (no lease expiry) instead of leaving them released
  --reason TEXT      kept with the rollout
  --hold SECONDS     hold each step this long (or one per step, by commas) before the server's
                     driver checks the gates and moves the next step; without it, advance by hand
  --hold-extension SECONDS
                     how much longer a hold may wait for a gate's samples (default: the hold)
  --gates FILE       a JSON array of gates, checked over each hold (docs/rollout.md)
  --on-failure A     what a failed gate does: rollback (default) or pause`,
  flags: {
    hold: { type: 'string' },
    'hold-extension': { type: 'string' },
    gates: { type: 'string' },
    'on-failure': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    prefix: { type: 'string' },
    scope: { type: 'string', multiple: true },
    steps: { type: 'string' },
    controller: { type: 'string' },
    reason: { type: 'string' },
  },
  positionals: ['rollout_id'],
  work: async (client, flags) =>
    rolloutAnswer('started', await client.rollouts.start(startRequest(flags))),
});

export const rolloutStatusCommand = httpCommand({
  name: 'rollout status',
  summary: "show a rollout, or list the tenant's rollouts (operator)",
  usage: `Usage: fencegate rollout status [ROLLOUT_ID] [--url URL] [--token T] [--json]

With ROLLOUT_ID: its status, percent, step, versions, selection, revision and current cutover
(exit 1 when there is no such rollout). Without: one such line per rollout, by id.

Options:`,
  optionalPositional: 'rollout_id',
  work: async (client, flags) => {
    const rolloutId = flags.rollout_id;
    if (typeof rolloutId !== 'string') {
      const items = await client.rollouts.list();
      const text = items.length === 0 ? 'no rollout' : items.map(rolloutLine).join('\n');
      return { json: { items }, text };
    }
    const rollout = await client.rollouts.get(rolloutId);
    if (rollout === null) return { json: null, text: `no rollout ${rolloutId}`, exit: 1 };
    return { json: rollout, text: rolloutLine(rollout) };
  },
});

/** A command that changes a rollout's state: ROLLOUT_ID [--revision N]. */
function stateCommand(
  command: 'advance' | 'pause' | 'resume' | 'promote',
  summary: string,
  description: string,
  done: string,
) {
  return httpCommand({
    name: `rollout ${command}`,
    summary: `${summary} (operator)`,
    usage: `Usage: fencegate rollout ${command} ROLLOUT_ID [--revision N] [--url URL] [--token T] [--json]

${description}

Options:
${REVISION_USAGE}`,
    flags: { revision: { type: 'string' } },
    positionals: ['rollout_id'],
    work: async (client, flags) =>
      rolloutAnswer(done, await client.rollouts[command](rolloutCommand(flags))),
  });
}

export const rolloutAdvanceCommand = stateCommand(
  'advance',
  "move a rollout's next step",
  'Moves the next step of a running rollout; a step that was interrupted is resumed instead.',
  'advanced',
);

export const rolloutPauseCommand = stateCommand(
  'pause',
  'stop a rollout from advancing',
  'No step advances until resume; a step under way still finishes.',
  'paused',
);

export const rolloutResumeCommand = stateCommand(
  'resume',
  'resume a paused rollout',
  'A paused rollout may advance again.',
  'resumed',
);

export const rolloutPromoteCommand = stateCommand(
  'promote',
  'ramp a rollout to 100 % in one step',
  'Moves every scope of the selection not ramped yet, in one last step.',
  'promoted',
);

export const rolloutRollbackCommand = httpCommand({
  name: 'rollout rollback',
  summary: 'move every scope a rollout moved back to its old policy, with a new fence (operator)',
  usage: `Usage: fencegate rollout rollback ROLLOUT_ID [--revision N] [--cancel-intents]
                                [--url URL] [--token T] [--json]

Moves every scope the rollout moved or pinned, still on the new version, back to the old one with
a new fence: no commit of the new version's in-flight work is accepted on it from then on. Sent
again, it resumes the same rollback. Records and checkpoints are not reverted.

Options:
${REVISION_USAGE}
  --cancel-intents   also cancel the pending intents committed under the new version`,
  flags: { revision: { type: 'string' }, 'cancel-intents': { type: 'boolean' } },
  positionals: ['rollout_id'],
  work: async (client, flags) => {
    const request = {
      ...rolloutCommand(flags),
      ...(flags['cancel-intents'] === true ? { cancelIntents: true } : {}),
    };
    return rolloutAnswer('rolled back', await client.rollouts.rollback(request));
  },
});

export const rolloutReportCommand = httpCommand({
  name: 'rollout report',
  summary:
    "a rollout's report: scopes moved and commits accepted per step, its rollback (operator)",
  usage: `Usage: fencegate rollout report ROLLOUT_ID [--url URL] [--token T] [--json]

Per step: the scopes it moved and the commits accepted on them, the scopes an acquire pinned
during it, and on its scopes the intents with an unknown outcome and the new version's jobs in the
jobs ledger. After a rollback: the scopes moved
back, the commit attempts under an older fence since (stale attempts) and how many of them were
accepted (staleAccepted, which must be 0). Exit 1 when there is no such rollout.

Options:`,
  positionals: ['rollout_id'],
  work: async (client, flags) => {
    const rolloutId = requiredString(flags, 'rollout_id');
    const report = await client.rollouts.report(rolloutId);
    if (report === null) return { json: null, text: `no rollout ${rolloutId}`, exit: 1 };
    return { json: report, text: reportText(report) };
  },
});

function rolloutAnswer(verb: string, rollout: Rollout): HttpAnswer {
  return { json: rollout, text: `${verb} ${rolloutLine(rollout)}` };
}

function rolloutCommand(flags: FlagValues): RolloutCommand {
  return {
    rolloutId: requiredString(flags, 'rollout_id'),
    ...(flags.revision === undefined
      ? {}
      : { revision: integerOption(flags, 'revision', { min: 1 }) }),
  };
}

/** The start's body from its flags; the server checks the values (invalid_request is exit 2). */
function startRequest(flags: FlagValues): StartRolloutRequest {
  const scopes = flags.scope as string[] | undefined;
  const prefix = typeof flags.prefix === 'string' ? flags.prefix : undefined;
  if ((scopes === undefined) === (prefix === undefined)) {
    throw new UsageError('give the selection as --prefix P or as --scope S (repeatable), not both');
  }
  return {
    rolloutId: requiredString(flags, 'rollout_id'),
    fromPolicy: requiredString(flags, 'from'),
    toPolicy: requiredString(flags, 'to'),
    ...(scopes === undefined ? { prefix } : { scopes }),
    steps: stepsOption(flags),
    ...(typeof flags.controller === 'string' ? { controller: flags.controller } : {}),
    ...(typeof flags.reason === 'string' ? { reason: flags.reason } : {}),
    ...holdOptions(flags),
  };
}

/** --hold, --hold-extension, --gates and --on-failure; the server checks their values. */
function holdOptions(flags: FlagValues): Partial<StartRolloutRequest> {
  const options: Partial<StartRolloutRequest> = {};
  if (typeof flags.hold === 'string') {
    const holds = wholeNumbers(flags.hold, '--hold', '300 or 60,300,600');
    options.holdSeconds = holds.length === 1 ? holds[0]! : holds;
  }
  if (typeof flags['hold-extension'] === 'string') {
    options.holdExtensionSeconds = integerOption(flags, 'hold-extension', { min: 0 });
  }
  if (typeof flags.gates === 'string') options.gates = gatesFile(flags.gates);
  const onFailure = flags['on-failure'];
  if (typeof onFailure === 'string') {
    if (onFailure !== 'rollback' && onFailure !== 'pause') {
      throw new UsageError(`--on-failure must be rollback or pause, not ${quoted(onFailure)}`);
    }
    options.onFailure = onFailure;
  }
  return options;
}

function gatesFile(path: string): RolloutGate[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    throw new UsageError(`--gates ${path} cannot be read (${code})`);
  }
  try {
    return JSON.parse(text) as RolloutGate[];
  } catch {
    throw new UsageError(`--gates ${path} is not JSON: give a JSON array of gates`);
  }
}

function wholeNumbers(raw: string, flag: string, example: string): number[] {
  const parts = raw.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^\d{1,9}$/.test(part))) {
    throw new UsageError(
      `${flag} must be whole numbers separated by commas, such as ${example}, not ${quoted(raw)}`,
    );
  }
  return parts.map(Number);
}

/** `--steps 5,25,50,100`: whole numbers separated by commas. */
function stepsOption(flags: FlagValues): number[] {
  const raw = requiredString(flags, 'steps');
  const parts = raw.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^\d{1,3}$/.test(part))) {
    throw new UsageError(
      `--steps must be whole percentages separated by commas, such as 5,25,50,100, not ${quoted(raw)}`,
    );
  }
  return parts.map(Number);
}
