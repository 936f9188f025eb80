/**
 * `fencegate token list` and `fencegate token revoke ID`: open the store directly (a running
 * server's SQLite file or PostgreSQL schema works too). A listing never shows a token or its hash.
 */
import { requireTenant } from '../core/validate.js';
import { summarizeToken } from '../server/tokens.js';
import type { Store } from '../store/store.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  requiredString,
  type CliIo,
  type Command,
  type FlagValues,
} from './command.js';
import { OPEN_STORE_FLAGS, openCliStore, storeFlagsUsage } from './cli-store.js';

const STORE_OPTION = storeFlagsUsage(20);

export const tokenListCommand: Command = {
  name: 'token list',
  summary: 'list tokens: id, tenant, role, created, label (never the token)',
  usage: `Usage: fencegate token list [--tenant T] [--store URL] [--create-store]

Prints one line per token, oldest first: id, tenant, role, creation time and label, and the
scope prefixes a worker may take over when a listed token has them. Admin tokens show tenant
_admin and role admin. Tokens themselves are never shown.

Options:
  --tenant T        only the tokens of this tenant
${STORE_OPTION}
  -h, --help        show this help
`,
  flags: { tenant: { type: 'string' }, store: { type: 'string' }, ...OPEN_STORE_FLAGS },
  run: listTokens,
};

export const tokenRevokeCommand: Command = {
  name: 'token revoke',
  summary: 'delete a token by its id; every server refuses it within 1 s',
  usage: `Usage: fencegate token revoke ID [--store URL] [--create-store]

Deletes the token with this id (from "fencegate token list", or printed when it was created).
Requests with it are refused from then on: a running server may trust a token
it looked up in the last second, so every server refuses it within 1 s.

Options:
${STORE_OPTION}
  -h, --help        show this help
`,
  flags: { store: { type: 'string' }, ...OPEN_STORE_FLAGS },
  positionals: ['id'],
  run: revokeToken,
};

async function listTokens(flags: FlagValues, io: CliIo): Promise<number> {
  const tenant = typeof flags.tenant === 'string' ? requireTenant(flags.tenant) : undefined;
  const tokens = await withStore(flags, io, (store) => store.listTokens(tenant));
  const summaries = tokens.map(summarizeToken);
  // The take-over column appears only when a listed token has the right.
  const withRight = summaries.some((t) => t.mayTakeOver !== undefined);
  const rows = summaries.map((t) => [
    t.id,
    t.tenant,
    t.role,
    new Date(t.createdAt).toISOString(),
    printable(t.label),
    ...(withRight ? [(t.mayTakeOver ?? []).join(',')] : []),
  ]);
  const header = ['ID', 'TENANT', 'ROLE', 'CREATED', 'LABEL'];
  io.stdout(table([withRight ? [...header, 'MAY TAKE OVER'] : header, ...rows]));
  return EXIT_OK;
}

async function revokeToken(flags: FlagValues, io: CliIo): Promise<number> {
  const id = requiredString(flags, 'id');
  const deleted = await withStore(flags, io, (store) => store.deleteToken(id));
  if (!deleted) {
    io.stderr(`fencegate token revoke: no token with id ${id}\n`);
    return EXIT_FAILURE;
  }
  io.stderr(`fencegate: token ${id} revoked\n`);
  return EXIT_OK;
}

async function withStore<T>(
  flags: FlagValues,
  io: CliIo,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openCliStore(flags, io);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** A label as one line of plain text: control characters would break the table or the terminal. */
function printable(label: string | null): string {
  // eslint-disable-next-line no-control-regex
  return (label ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}
