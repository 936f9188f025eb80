/**
 * What the commands of the core loop (acquire, commit, release, takeover, scope, record, audit,
 * outcome) and of rollouts (`rollout …`) share: a FencegateClient on `--url` with `--token` (or FENCEGATE_URL, FENCEGATE_TOKEN),
 * readable output or `--json`, and the exit codes 0 done or committed, 1 rejected, 2 usage,
 * 3 outcome unknown.
 */
import { FencegateClient } from '../client/client.js';
import { FencegateError, isFencegateError } from '../errors.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  UsageError,
  type Command,
  type FlagSpec,
  type FlagValues,
} from './command.js';
import { quoted } from './echo.js';
import { DEFAULT_URL, serverConnection } from './server-connection.js';

/** The commit may have applied or not: settle it with `outcome OP --abandon`. */
export const EXIT_OUTCOME_UNKNOWN = 3;

export const HTTP_FLAGS: Record<string, FlagSpec> = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
};

/** The usage lines of the shared flags and the exit codes. */
export const HTTP_USAGE = `  --url URL          the server's http:// or https:// base URL, without user or password
                     (env FENCEGATE_URL, default ${DEFAULT_URL})
  --token TOKEN      a worker or operator token, fg_… (env FENCEGATE_TOKEN)
  --json             print the server's answer as JSON
  -h, --help         show this help

Exit codes: 0 done or committed, 1 rejected, 2 usage error, 3 outcome unknown.
`;

/** A command of the core loop: `work` returns what to print and whether it was done. */
export interface HttpCommandSpec {
  name: string;
  summary: string;
  /** The usage line(s) and the command's own options, before the shared ones. */
  usage: string;
  flags?: Record<string, FlagSpec>;
  positionals?: readonly string[];
  optionalPositional?: string;
  work(client: FencegateClient, flags: FlagValues): Promise<HttpAnswer>;
}

export interface HttpAnswer {
  /** What --json prints. */
  json: unknown;
  /** What is printed otherwise, one or more lines. */
  text: string;
  /** EXIT_OK unless the answer is a rejection or unknown. */
  exit?: number;
}

export function httpCommand(spec: HttpCommandSpec): Command {
  const usage = `${spec.usage}\n${HTTP_USAGE}`;
  return {
    name: spec.name,
    summary: spec.summary,
    usage,
    flags: { ...spec.flags, ...HTTP_FLAGS },
    ...(spec.positionals === undefined ? {} : { positionals: spec.positionals }),
    ...(spec.optionalPositional === undefined
      ? {}
      : { optionalPositional: spec.optionalPositional }),
    run: async (flags, io) => {
      const client = new FencegateClient(serverConnection(flags, io));
      try {
        const answer = await spec.work(client, flags);
        io.stdout(
          flags.json === true ? `${JSON.stringify(answer.json)}\n` : ensureLine(answer.text),
        );
        return answer.exit ?? EXIT_OK;
      } catch (error) {
        // invalid_request is the caller's input: main answers it with the usage, exit 2.
        if (!isFencegateError(error) || error.code === 'invalid_request') throw error;
        const shown = forCommandLine(error);
        const line = `fencegate ${spec.name}: ${shown.code}: ${shown.message}\n`;
        if (flags.json === true) io.stdout(`${JSON.stringify({ error: shown.toJSON() })}\n`);
        io.stderr(line);
        return shown.code === 'outcome_unknown' ? EXIT_OUTCOME_UNKNOWN : EXIT_FAILURE;
      } finally {
        await client.close();
      }
    },
  };
}

/**
 * The library's outcome_unknown of a commit names the library call that settles it; at the command
 * line, the command that does.
 */
function forCommandLine(error: FencegateError): FencegateError {
  const operationId = error.details.operationId;
  if (error.code !== 'outcome_unknown' || typeof operationId !== 'string') return error;
  return new FencegateError(
    'outcome_unknown',
    `the outcome of commit ${operationId} is unknown and could not be settled now (the server or ` +
      `its store did not answer). Once it answers, run "fencegate outcome ${operationId}" to read the stored ` +
      `outcome, or "fencegate outcome ${operationId} --abandon" to settle it (the commit then ` +
      'never applies unless it already has), or send the same commit again',
    error.details,
  );
}

function ensureLine(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/**
 * An integer flag from `min` (default 0) to `max` (default 2^53 - 1), required unless `fallback`
 * is given.
 */
export function integerOption(
  flags: FlagValues,
  name: string,
  range: { min?: number; max?: number; fallback?: number } = {},
): number {
  const raw = flags[name];
  if (raw === undefined && range.fallback !== undefined) return range.fallback;
  if (raw === undefined) throw new UsageError(`--${name} is required`);
  const min = range.min ?? 0;
  // Past 2^53 - 1 a number is rounded, so no flag takes more.
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const accepted = `an integer from ${min} to ${max}`;
  const value = typeof raw === 'string' && /^\d{1,16}$/.test(raw) ? Number(raw) : undefined;
  if (value === undefined || value < min || value > max) {
    throw new UsageError(`--${name} must be ${accepted}, not ${quoted(String(raw))}`);
  }
  return value;
}

/** A time of the store as people read it: ISO 8601 in UTC. */
export function timeText(ms: number | null): string {
  return ms === null ? 'none' : new Date(ms).toISOString();
}
