/**
 * `fencegate commit`: one fenced commit over HTTP (see http-command.ts). Each write is
 * `--write NAME@REVISION=JSON`: the record, the revision it was read at (0: absent) and its new
 * value, so a stale commit is as easy to send as a fresh one.
 */
import type { CommitResult, WriteRequest } from '../types.js';
import { requiredString, UsageError, type FlagValues } from './command.js';
import { quoted } from './echo.js';
import { httpCommand, integerOption } from './http-command.js';

const WRITE_FORM = 'NAME@REVISION=JSON';

export const commitCommand = httpCommand({
  name: 'commit',
  summary: 'commit writes to a scope under its fence',
  usage: `Usage: fencegate commit SCOPE --fence N --op ID [--write ${WRITE_FORM}]... [--release]
                        [--url URL] [--token T] [--json]

Commits the writes to SCOPE if fence N is current, its holder's lease live and every record
still at the revision given; otherwise nothing changes and the rejection names why.

Options:
  --fence N          the fence of the grant (acquire or takeover printed it)
  --op ID            the operationId: one request of the tenant, forever; sending the same
                     commit again answers its stored outcome
  --write ${WRITE_FORM}
                     (repeatable) set record NAME, read at REVISION (0: absent), to the JSON
                     value, e.g. --write 'summary@0={"facts":["handoff"]}'
  --release          also release the lease when it commits (the run's last commit)`,
  flags: {
    fence: { type: 'string' },
    op: { type: 'string' },
    write: { type: 'string', multiple: true },
    release: { type: 'boolean' },
  },
  positionals: ['scope'],
  work: async (client, flags) => {
    const result = await client.commit({
      scope: requiredString(flags, 'scope'),
      fence: integerOption(flags, 'fence'),
      operationId: requiredString(flags, 'op'),
      writes: writesOf(flags),
      ...(flags.release === true ? { release: true as const } : {}),
    });
    return outcomeAnswer(result);
  },
});

/** A commit's outcome as the commands print it: exit 0 committed, 1 rejected. */
export function outcomeAnswer(result: CommitResult): { json: unknown; text: string; exit: number } {
  if (result.outcome === 'committed') {
    const records = result.records.map((r) => `${r.name} r${r.revision}`).join(', ');
    const replayed = result.replayed ? ' (replayed: it had committed before)' : '';
    return {
      json: result,
      text: `committed ${result.operationId} on ${result.scope} at fence ${result.fence}: ${records || 'no write'}${replayed}`,
      exit: 0,
    };
  }
  return {
    json: result,
    text: `rejected ${result.operationId}: ${result.error.code}: ${result.error.message}`,
    exit: 1,
  };
}

function writesOf(flags: FlagValues): WriteRequest[] {
  const given = flags.write;
  const list = given === undefined ? [] : Array.isArray(given) ? given : [given];
  return list.map((item) => parseWrite(String(item)));
}

function parseWrite(text: string): WriteRequest {
  const equals = text.indexOf('=');
  const target = equals === -1 ? '' : text.slice(0, equals);
  const at = target.lastIndexOf('@');
  const name = target.slice(0, Math.max(at, 0));
  const revision = target.slice(at + 1);
  if (equals === -1 || at <= 0 || !/^\d{1,15}$/.test(revision)) {
    throw new UsageError(
      `--write ${quoted(text)} is not ${WRITE_FORM}, e.g. 'summary@0={"facts":[]}'`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(equals + 1));
  } catch (error) {
    throw new UsageError(
      `--write ${quoted(name)}: the value is not JSON (${error instanceof Error ? error.message : String(error)}); quote a string as '"text"'`,
    );
  }
  return { name, expectRevision: Number(revision), value };
}
