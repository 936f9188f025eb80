/**
 * `fencegate verify`: replays a store's audit log and proves the invariants of SEMANTICS.md, or
 * lists the entries that break them. Exit codes: 0 the history is valid, 1 a violation was found,
 * 2 called wrongly, 3 the history could not be read (store unreachable, unreadable checkpoint) or
 * held no entry to check.
 */
import { loadCheckpoint, saveCheckpoint } from '../audit/checkpoint.js';
import { verifyStore, type VerifyResult } from '../audit/verify.js';
import { requireTenant } from '../core/validate.js';
import { isFencegateError } from '../errors.js';
import { DEFAULT_STORE_URL, openStore, redactUrl } from '../store/open.js';
import type { Store } from '../store/store.js';
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  parseFlags,
  UsageError,
  type CliIo,
  type Command,
  type FlagValues,
} from './command.js';
import { cliStoreUrl, requireExistingStore, STORE_ENV } from './cli-store.js';
import { loadStoreModules, STORE_MODULE_FLAG, storeModuleUsage } from './store-modules.js';

/** The history could not be read, so nothing was proven either way. */
export const EXIT_UNVERIFIED = 3;

/** Violations printed in the readable summary; --json lists every one kept. */
const PRINTED_VIOLATIONS = 50;

const USAGE = `Usage: fencegate verify [--store URL] [--tenant T] [--checkpoint FILE] [--json]

Replays the audit log in seq order and proves that fences never decreased or
repeated, every accepted commit carried the current fence and a live holder,
every accepted write expected the record's previous revision, no effect key was
delivered twice, and no stale attempt was accepted after a cutover.

Options:
  --store URL          the store (env ${STORE_ENV}, default ${DEFAULT_STORE_URL}); a SQLite
                       file must exist
${storeModuleUsage(23)}
  --tenant T           verify one tenant's history (default: every tenant)
  --checkpoint FILE    continue after the entries verified by an earlier run and
                       save the new state there (created when absent)
  --json               print the result as JSON
  -h, --help           show this help

Exit codes: 0 valid, 1 violation found, 2 usage error, 3 history could not be read or
had no entry to check.
`;

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'prove the audit history keeps every fencing and revision invariant',
  usage: USAGE,
  flags: {
    store: { type: 'string' },
    tenant: { type: 'string' },
    checkpoint: { type: 'string' },
    json: { type: 'boolean' },
    ...STORE_MODULE_FLAG,
  },
  run: verify,
};

/** Standalone entry: parses argv (the words after `verify`) and runs the command. */
export async function runVerify(argv: string[], io: CliIo = processIo()): Promise<number> {
  try {
    const flags = parseFlags(argv, verifyCommand.flags);
    if (flags.help === true) {
      io.stdout(USAGE);
      return EXIT_OK;
    }
    return await verify(flags, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`fencegate verify: ${error.message}\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    io.stderr(`fencegate verify: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_UNVERIFIED;
  }
}

async function verify(flags: FlagValues, io: CliIo): Promise<number> {
  const url = cliStoreUrl(flags, io);
  const tenant =
    typeof flags.tenant === 'string' ? usage(() => requireTenant(flags.tenant)) : undefined;
  const checkpointPath = typeof flags.checkpoint === 'string' ? flags.checkpoint : undefined;
  if (checkpointPath === '') throw new UsageError('--checkpoint needs a file name');
  // Opening a missing SQLite file would create an empty store and "prove" it.
  requireExistingStore(url, '');
  await loadStoreModules(flags, io, url);

  let store: Store | undefined;
  try {
    const checkpoint = checkpointPath === undefined ? null : await loadCheckpoint(checkpointPath);
    store = await usageOnInvalid(() => openStore(url));
    const result = await usageOnInvalid(() =>
      verifyStore(store!, {
        ...(tenant === undefined ? {} : { tenant }),
        ...(checkpoint === null ? {} : { checkpoint }),
      }),
    );
    if (result.totalChecked === 0) {
      // A green verdict over no entry would prove nothing: a mistyped tenant or another store.
      if (flags.json === true) io.stdout(`${JSON.stringify(jsonOf(result, url, tenant))}\n`);
      io.stderr(nothingChecked(url, tenant));
      return EXIT_UNVERIFIED;
    }
    if (checkpointPath !== undefined) await saveCheckpoint(checkpointPath, result.checkpoint);
    io.stdout(
      flags.json === true
        ? `${JSON.stringify(jsonOf(result, url, tenant))}\n`
        : summary(result, url, tenant),
    );
    return result.ok ? EXIT_OK : EXIT_FAILURE;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    io.stderr(`fencegate verify: the history could not be verified: ${messageOf(error)}\n`);
    return EXIT_UNVERIFIED;
  } finally {
    await store?.close();
  }
}

function nothingChecked(url: string, tenant: string | undefined): string {
  const what =
    tenant === undefined
      ? 'the store holds no audit entry'
      : `tenant ${tenant} has no audit entry in this store`;
  return (
    `fencegate verify: nothing was checked: ${what} ` +
    `(${redactUrl(url)}); check the tenant's name and that --store or FENCEGATE_STORE names ` +
    `the server's store\n`
  );
}

function usage<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
}

/** invalid_request from the store layer (a bad URL, a checkpoint of another tenant) is a usage error. */
async function usageOnInvalid<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isFencegateError(error) && error.code === 'invalid_request')
      throw new UsageError(error.message);
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function jsonOf(result: VerifyResult, url: string, tenant: string | undefined): object {
  return {
    ok: result.ok,
    store: redactUrl(url),
    tenant: tenant ?? null,
    checked: result.checked,
    totalChecked: result.totalChecked,
    lastSeq: result.lastSeq,
    violationCount: result.violationCount,
    totalViolations: result.totalViolations,
    violations: result.violations,
  };
}

function summary(result: VerifyResult, url: string, tenant: string | undefined): string {
  const lines: string[] = [];
  const what = tenant === undefined ? 'every tenant' : `tenant ${tenant}`;
  const resumed =
    result.totalChecked > result.checked
      ? ` (${result.totalChecked} in all with earlier runs)`
      : '';
  lines.push(
    `fencegate verify: ${redactUrl(url)}, ${what}: ${result.checked} audit entries checked${resumed}, last seq ${result.lastSeq ?? 'none'}`,
  );
  if (result.ok) {
    lines.push(
      'ok: no violation; fences, holders, leases, revisions and effect deliveries are consistent',
    );
    return `${lines.join('\n')}\n`;
  }
  const earlier = result.totalViolations - result.violationCount;
  lines.push(
    `VIOLATIONS: ${result.violationCount} found in this run${earlier > 0 ? `, ${earlier} in earlier runs` : ''}`,
  );
  for (const v of result.violations.slice(0, PRINTED_VIOLATIONS)) {
    const where = v.scope === null ? v.tenant : `${v.tenant}/${v.scope}`;
    lines.push(`  seq ${v.seq}  ${v.kind}  ${where}: ${v.message}`);
  }
  const hidden = result.violationCount - Math.min(result.violations.length, PRINTED_VIOLATIONS);
  if (hidden > 0) lines.push(`  ... and ${hidden} more (--json lists up to 1000)`);
  return `${lines.join('\n')}\n`;
}

function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  };
}
