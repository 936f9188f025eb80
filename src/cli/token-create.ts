/**
 * `fencegate token create`: opens the store directly (a running server's SQLite file works too),
 * stores a new token's hash and prints the token once.
 */
import { issueToken } from '../server/tokens.js';
import {
  EXIT_OK,
  requiredString,
  UsageError,
  type CliIo,
  type Command,
  type FlagValues,
} from './command.js';
import { OPEN_STORE_FLAGS, openCliStore, storeFlagsUsage } from './cli-store.js';

const USAGE = `Usage: fencegate token create --tenant T --role worker|operator [--store URL] [--label L]
                              [--create-store]
                              [--may-take-over PREFIX]...

Creates a token of one tenant and one role and prints it on stdout (details on stderr).
The token is shown only this once; the store keeps its sha256.

Options:
  --tenant T              the tenant the token acts for (a-z 0-9 _ -, starting with a letter or digit)
  --role ROLE             worker, or operator (a worker, plus takeover, cancel, delete and audit)
  --may-take-over PREFIX  (worker only, repeatable) the worker may also take over scopes whose
                          name starts with PREFIX, and no others
${storeFlagsUsage(26)}
  --label L               a note kept with the token
  -h, --help              show this help

Examples:
  export FENCEGATE_TOKEN=$(fencegate token create --tenant acme --role worker)
  fencegate token create --tenant acme --role worker --may-take-over langgraph/
`;

export const tokenCreateCommand: Command = {
  name: 'token create',
  summary: 'create a worker or operator token for a tenant',
  usage: USAGE,
  flags: {
    tenant: { type: 'string' },
    role: { type: 'string' },
    store: { type: 'string' },
    ...OPEN_STORE_FLAGS,
    label: { type: 'string' },
    'may-take-over': { type: 'string', multiple: true },
  },
  run: createToken,
};

async function createToken(flags: FlagValues, io: CliIo): Promise<number> {
  const tenant = requiredString(flags, 'tenant');
  const role = requiredString(flags, 'role');
  if (role !== 'worker' && role !== 'operator') {
    throw new UsageError(`--role must be worker or operator, not "${role}"`);
  }
  const label = typeof flags.label === 'string' ? flags.label : undefined;
  const mayTakeOver = takeOverPrefixes(flags, role);
  const store = await openCliStore(flags, io);
  try {
    const { record, token } = await issueToken(store, { tenant, role, label, mayTakeOver });
    io.stdout(`${token}\n`);
    const right =
      record.mayTakeOver === undefined
        ? ''
        : ` that may take over scopes starting with ${record.mayTakeOver.join(', ')}`;
    io.stderr(
      `fencegate: created ${record.role} token ${record.id} for tenant ${record.tenant}${right}; it is shown only this once\n`,
    );
  } finally {
    await store.close();
  }
  return EXIT_OK;
}

/** The --may-take-over prefixes, or undefined when none was given. */
function takeOverPrefixes(flags: FlagValues, role: string): string[] | undefined {
  const value = flags['may-take-over'];
  if (value === undefined) return undefined;
  if (role !== 'worker') {
    throw new UsageError(
      '--may-take-over is only for --role worker: an operator may take over any scope already',
    );
  }
  return (Array.isArray(value) ? value : [value]).map(String);
}
