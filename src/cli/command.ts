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
  /** Whether stdout is a terminal: secrets are printed only to one (or to a file named). */
  stdoutIsTTY?: boolean;
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
  /** Names of the required positional arguments, in order; their values land in FlagValues. */
  positionals?: readonly string[];
  run(flags: FlagValues, io: CliIo): Promise<number>;
}

/** A mistake in how the command was called: answered with the usage text and exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export function parseFlags(
  args: string[],
  flags: Record<string, FlagSpec>,
  positionals: readonly string[] = [],
): FlagValues {
  let parsed: { values: FlagValues; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: { ...flags, help: { type: 'boolean', short: 'h' } },
      allowPositionals: positionals.length > 0,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values: FlagValues = { ...parsed.values };
  if (values.help === true) return values;
  if (parsed.positionals.length !== positionals.length) {
    throw new UsageError(
      positionals.length === 0
        ? `unexpected argument "${parsed.positionals[0]}"`
        : `expected ${positionals.map((name) => name.toUpperCase()).join(' ')}`,
    );
  }
  positionals.forEach((name, i) => (values[name] = parsed.positionals[i]));
  return values;
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
