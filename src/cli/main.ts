/**
 * The fencegate CLI. `main` parses argv against a small command table and returns the exit code:
 * 0 done, 1 failed or rejected, 2 called wrongly (unknown command or flag: message and usage on
 * stderr), 3 a commit's outcome unknown.
 */
import { isFencegateError } from '../errors.js';
import { packageVersion } from '../server/version.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  parseFlags,
  UsageError,
  type CliIo,
  type Command,
} from './command.js';
import { commitCommand } from './commit-command.js';
import { demoCommand } from './demo-command.js';
import { demoRolloutCommand } from './demo-rollout-command.js';
import { acquireCommand, releaseCommand, takeoverCommand } from './lease-commands.js';
import { auditCommand, outcomeCommand, recordCommand, scopeCommand } from './read-commands.js';
import { retentionCommand } from './retention-command.js';
import {
  rolloutAdvanceCommand,
  rolloutPauseCommand,
  rolloutPromoteCommand,
  rolloutReportCommand,
  rolloutResumeCommand,
  rolloutRollbackCommand,
  rolloutStartCommand,
  rolloutStatusCommand,
} from './rollout-commands.js';
import { serveCommand } from './serve.js';
import { tokenCreateCommand } from './token-create.js';
import { tokenListCommand, tokenRevokeCommand } from './token-manage.js';
import { verifyCommand } from './verify-command.js';

/** Every command. A new one is one file and one line here. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  tokenCreateCommand,
  tokenListCommand,
  tokenRevokeCommand,
  demoCommand,
  demoRolloutCommand,
  verifyCommand,
  retentionCommand,
  // The core loop over HTTP, with a token.
  acquireCommand,
  commitCommand,
  takeoverCommand,
  releaseCommand,
  scopeCommand,
  recordCommand,
  auditCommand,
  outcomeCommand,
  // Progressive rollouts over HTTP, with an operator token.
  rolloutStartCommand,
  rolloutStatusCommand,
  rolloutAdvanceCommand,
  rolloutPauseCommand,
  rolloutResumeCommand,
  rolloutPromoteCommand,
  rolloutRollbackCommand,
  rolloutReportCommand,
];

export function usage(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const lines = COMMANDS.map(
    (command) => `  fencegate ${command.name.padEnd(width)}   ${command.summary}`,
  );
  return [
    'Usage: fencegate <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run "fencegate <command> --help" for the options of a command.',
    '',
  ].join('\n');
}

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const first = argv[0];
  if (first === undefined) {
    io.stderr(usage());
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    io.stdout(usage());
    return EXIT_OK;
  }
  if (first === '--version' || first === '-v') {
    io.stdout(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  const command = findCommand(argv);
  if (command === undefined) {
    const words = argv
      .filter((arg) => !arg.startsWith('-'))
      .slice(0, 2)
      .join(' ');
    io.stderr(`fencegate: unknown command "${words}"\n\n${usage()}`);
    return EXIT_USAGE;
  }
  const args = argv.slice(command.name.split(' ').length);
  try {
    const flags = parseFlags(args, command.flags, command.positionals, command.optionalPositional);
    if (flags.help === true) {
      io.stdout(command.usage);
      return EXIT_OK;
    }
    return await command.run(flags, io);
  } catch (error) {
    // invalid_request is always the caller's input (a malformed store URL, tenant, …).
    if (
      error instanceof UsageError ||
      (isFencegateError(error) && error.code === 'invalid_request')
    ) {
      io.stderr(`fencegate ${command.name}: ${error.message}\n\n${command.usage}`);
      return EXIT_USAGE;
    }
    const message =
      isFencegateError(error) || error instanceof Error ? error.message : String(error);
    io.stderr(`fencegate ${command.name}: ${message}\n`);
    return EXIT_FAILURE;
  }
}

/** The command whose words start argv, the longest such name first. */
function findCommand(argv: string[]): Command | undefined {
  return [...COMMANDS]
    .sort((a, b) => b.name.length - a.name.length)
    .find((command) => command.name.split(' ').every((word, i) => argv[i] === word));
}

function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stderrIsTTY: process.stderr.isTTY === true,
    stdoutIsTTY: process.stdout.isTTY === true,
  };
}
