/**
 * What a CLI command is: a name (one or more words), its usage text, its flags and a run function.
 * main.ts keeps the table; a new command is one file and one line there.
 */
import { parseArgs } from 'node:util';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal, for commands that draw a live progress line. */
  stderrIsTTY?: boolean;
}

export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** May be given several times; the value is then a list. */
  multiple?: boolean;
}

export type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Command {
  /** The words that select the command, e.g. `token create`. */
  name: string;
  summary: string;
  /** The full --help text. */
  usage: string;
  flags: Record<string, FlagSpec>;
  run(flags: FlagValues, io: CliIo): Promise<number>;
}

/** A mistake in how the command was called: answered with the usage text and exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export function parseFlags(args: string[], flags: Record<string, FlagSpec>): FlagValues {
  try {
    const { values } = parseArgs({
      args,
      options: { ...flags, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
      strict: true,
    });
    return values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** A string flag, else an environment variable, else the default. */
export function stringOption(
  flags: FlagValues,
  name: string,
  env: Record<string, string | undefined>,
  envName: string | undefined,
  fallback: string,
): string {
  const flag = flags[name];
  if (typeof flag === 'string') return flag;
  const fromEnv = envName === undefined ? undefined : env[envName];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : fallback;
}

export function requiredString(flags: FlagValues, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}
