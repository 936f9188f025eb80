/**
 * What the commands of the core loop (acquire, commit, release, takeover, scope, record, audit,
 * outcome) share: a FencegateClient on `--url` with `--token` (or FENCEGATE_URL, FENCEGATE_TOKEN),
 * readable output or `--json`, and the exit codes 0 done or committed, 1 rejected, 2 usage,
 * 3 outcome unknown.
 */
import { FencegateClient } from '../client/client.js';
import { isFencegateError } from '../errors.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  stringOption,
  UsageError,
  type CliIo,
  type Command,
  type FlagSpec,
  type FlagValues,
} from './command.js';

/** The commit may have applied or not: settle it with `outcome OP --abandon`. */
export const EXIT_OUTCOME_UNKNOWN = 3;

export const DEFAULT_URL = 'http://127.0.0.1:7420';

export const HTTP_FLAGS: Record<string, FlagSpec> = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
};

/** The usage lines of the shared flags and the exit codes. */
export const HTTP_USAGE = `  --url URL          the server (env FENCEGATE_URL, default ${DEFAULT_URL})
  --token TOKEN      a worker or operator token (env FENCEGATE_TOKEN)
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
    run: async (flags, io) => {
      const client = clientFrom(flags, io);
      try {
        const answer = await spec.work(client, flags);
        io.stdout(
          flags.json === true ? `${JSON.stringify(answer.json)}\n` : ensureLine(answer.text),
        );
        return answer.exit ?? EXIT_OK;
      } catch (error) {
        // invalid_request is the caller's input: main answers it with the usage, exit 2.
        if (!isFencegateError(error) || error.code === 'invalid_request') throw error;
        const line = `fencegate ${spec.name}: ${error.code}: ${error.message}\n`;
        if (flags.json === true) io.stdout(`${JSON.stringify({ error: error.toJSON() })}\n`);
        io.stderr(line);
        return error.code === 'outcome_unknown' ? EXIT_OUTCOME_UNKNOWN : EXIT_FAILURE;
      } finally {
        await client.close();
      }
    },
  };
}

function clientFrom(flags: FlagValues, io: CliIo): FencegateClient {
  const url = stringOption(flags, 'url', io.env, 'FENCEGATE_URL', DEFAULT_URL);
  const token = stringOption(flags, 'token', io.env, 'FENCEGATE_TOKEN', '');
  if (token === '') {
    throw new UsageError(
      'a token is needed: pass --token or FENCEGATE_TOKEN (npm start printed one on its first run)',
    );
  }
  return new FencegateClient({ url, token });
}

function ensureLine(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** A non-negative integer flag, required unless `fallback` is given. */
export function integerOption(flags: FlagValues, name: string, fallback?: number): number {
  const raw = flags[name];
  if (raw === undefined && fallback !== undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) {
    throw new UsageError(
      raw === undefined
        ? `--${name} is required`
        : `--${name} must be an integer, not "${String(raw)}"`,
    );
  }
  return Number(raw);
}

/** A time of the store as people read it: ISO 8601 in UTC. */
export function timeText(ms: number | null): string {
  return ms === null ? 'none' : new Date(ms).toISOString();
}
