/**
 * The server a core-loop command calls and the token it calls with: `--url` and `--token`, else
 * FENCEGATE_URL and FENCEGATE_TOKEN. Either one malformed is a usage error (exit 2) that names
 * where it came from and never repeats it: a URL may carry a password, a token is a secret.
 */
import { EXAMPLE_SERVER_URL, serverUrlProblem } from '../client/server-url.js';
import { TOKEN_PATTERN, TOKEN_RULE } from '../core/token-format.js';
import { UsageError, type CliIo, type FlagValues } from './command.js';

export const DEFAULT_URL = EXAMPLE_SERVER_URL;

export interface ServerConnection {
  url: string;
  token: string;
}

export function serverConnection(flags: FlagValues, io: CliIo): ServerConnection {
  const url = setting(flags, 'url', io, 'FENCEGATE_URL') ?? { value: DEFAULT_URL, from: '--url' };
  const token = setting(flags, 'token', io, 'FENCEGATE_TOKEN');
  if (token === undefined || token.value === '') {
    throw new UsageError(
      'a token is needed: pass --token or FENCEGATE_TOKEN (npm start printed one on its first run)',
    );
  }
  requireServerUrl(url.value, url.from);
  if (!TOKEN_PATTERN.test(token.value)) {
    throw new UsageError(
      `${token.from} is not a fencegate token: a token is ${TOKEN_RULE}, as token create or the ` +
        "server's first start printed it; check that it was copied whole, without spaces or quotes",
    );
  }
  return { url: url.value, token: token.value };
}

function requireServerUrl(text: string, from: string): void {
  const problem = serverUrlProblem(text);
  if (problem === null) return;
  // The CLI's own words for where the token comes from.
  throw new UsageError(
    `${from} ${problem.replace('with a token', 'with --token or FENCEGATE_TOKEN')}`,
  );
}

/** The flag's value, else the environment variable's (when not empty), with where it came from. */
function setting(
  flags: FlagValues,
  name: string,
  io: CliIo,
  envName: string,
): { value: string; from: string } | undefined {
  const flag = flags[name];
  if (typeof flag === 'string') return { value: flag, from: `--${name}` };
  const fromEnv = io.env[envName];
  return fromEnv !== undefined && fromEnv !== '' ? { value: fromEnv, from: envName } : undefined;
}
