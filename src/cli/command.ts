/**
 * What a CLI command is: a name (one or more words), its usage text, its flags and a run function.
 * main.ts keeps the table; a new command is one file and one line there.
 */
import { parseArgs } from 'node:util';
import { TOKEN_PREFIX } from '../core/token-format.js';
import { quoted } from './echo.js';

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
  /** The name of one positional argument that may follow the required ones, or be left out. */
  optionalPositional?: string;
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
  optionalPositional?: string,
): FlagValues {
  let parsed: { values: FlagValues; positionals: string[] };
  try {
    parsed = parseArgs({
      args: negativeValuesJoined(args, flags),
      options: { ...flags, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const values: FlagValues = { ...parsed.values };
  if (values.help === true) return values;
  const accepted =
    optionalPositional === undefined ? positionals : [...positionals, optionalPositional];
  const extra = parsed.positionals[accepted.length];
  if (extra !== undefined) {
    const expected = accepted.length === 0 ? 'options only' : `only ${positionalList(accepted)}`;
    // A token typed without its flag is a secret: it is not repeated.
    const shown = extra.startsWith(TOKEN_PREFIX) ? `${TOKEN_PREFIX}… (a token?)` : quoted(extra);
    throw new UsageError(`unexpected argument ${shown}: expected ${expected}`);
  }
  positionals.forEach((name, i) => {
    const value = parsed.positionals[i];
    if (value === undefined || value === '') {
      const what = value === undefined ? 'missing' : 'empty';
      const all = positionals.length > 1 ? `: expected ${positionalList(positionals)}` : '';
      throw new UsageError(`${name.toUpperCase()} is ${what}${all} (see the usage line below)`);
    }
    values[name] = value;
  });
  if (optionalPositional !== undefined) {
    const value = parsed.positionals[positionals.length];
    if (value === '') throw new UsageError(`${optionalPositional.toUpperCase()} is empty`);
    if (value !== undefined) values[optionalPositional] = value;
  }
  return values;
}

function positionalList(positionals: readonly string[]): string {
  return positionals.map((name) => name.toUpperCase()).join(' ');
}

/**
 * `--limit -5` as `--limit=-5`: parseArgs takes a value starting with a dash for an option, and
 * would answer that the value is missing rather than that it is out of range. No option's name
 * is a number, so a negative number after a string flag is always its value.
 */
function negativeValuesJoined(args: string[], flags: Record<string, FlagSpec>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (
      name !== undefined &&
      flags[name]?.type === 'string' &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
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
