/** `fencegate scope`, `record`, `audit` and `outcome`: what the store holds, over HTTP. */
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT } from '../core/limits.js';
import type { AuditEntry } from '../types.js';
import { requiredString } from './command.js';
import { outcomeAnswer } from './commit-command.js';
import { EXIT_OUTCOME_UNKNOWN, httpCommand, integerOption, timeText } from './http-command.js';

export const scopeCommand = httpCommand({
  name: 'scope',
  summary: 'show a scope: fence, holder, lease, status',
  usage: `Usage: fencegate scope SCOPE [--url URL] [--token T] [--json]

Options:`,
  positionals: ['scope'],
  work: async (client, flags) => {
    const name = requiredString(flags, 'scope');
    const scope = await client.getScope(name);
    if (scope === null) return { json: null, text: `${name} does not exist yet`, exit: 1 };
    return {
      json: scope,
      text: `${scope.scope}: fence ${scope.fence}, holder ${scope.holder ?? 'none'}, lease until ${timeText(scope.leaseExpiresAt)}, ${scope.status}`,
    };
  },
});

export const recordCommand = httpCommand({
  name: 'record',
  summary: 'show a record of a scope: its revision and value',
  usage: `Usage: fencegate record SCOPE NAME [--url URL] [--token T] [--json]

The revision printed is what a commit's --write NAME@REVISION=JSON expects.

Options:`,
  positionals: ['scope', 'name'],
  work: async (client, flags) => {
    const record = await client.getRecord(
      requiredString(flags, 'scope'),
      requiredString(flags, 'name'),
    );
    const text = record.exists
      ? `${record.scope} ${record.name}: revision ${record.revision}\n${JSON.stringify(record.value)}`
      : `${record.scope} ${record.name}: absent, revision ${record.revision}`;
    return { json: record, text };
  },
});

export const auditCommand = httpCommand({
  name: 'audit',
  summary: "list the tenant's audit entries, oldest first (operator)",
  usage: `Usage: fencegate audit [--scope SCOPE] [--after SEQ] [--limit N] [--url URL] [--token T] [--json]

One line per attempt: seq, time, scope, kind, outcome, fence (the one the request carried; for
an acquire or takeover, the one it moved the scope to), operationId and, for a rejection, its code.

Options:
  --scope SCOPE      only this scope's entries
  --after SEQ        entries after this seq (the last line's seq pages on)
  --limit N          at most N entries, 1 to ${DEFAULT_LIMITS.maxListLimit} (default ${DEFAULT_LIST_LIMIT})`,
  flags: { scope: { type: 'string' }, after: { type: 'string' }, limit: { type: 'string' } },
  work: async (client, flags) => {
    const page = await client.audit({
      ...(typeof flags.scope === 'string' ? { scope: flags.scope } : {}),
      ...(flags.after === undefined ? {} : { afterSeq: integerOption(flags, 'after') }),
      limit: integerOption(flags, 'limit', {
        min: 1,
        max: DEFAULT_LIMITS.maxListLimit,
        fallback: DEFAULT_LIST_LIMIT,
      }),
    });
    const lines = page.items.map(auditLine);
    if (page.nextAfterSeq !== null) lines.push(`… more after seq ${page.nextAfterSeq}`);
    return { json: page, text: lines.length === 0 ? 'no audit entry' : lines.join('\n') };
  },
});

/** An acquire or a takeover carries no fence: its line shows the one the scope moved to. */
function auditLine(entry: AuditEntry): string {
  return [
    String(entry.seq).padStart(6),
    timeText(entry.at),
    entry.scope ?? '-',
    entry.kind.padEnd(8),
    entry.outcome.padEnd(9),
    `fence ${entry.fence ?? entry.currentFence ?? '-'}`,
    entry.operationId ?? '-',
    entry.reason ?? '',
  ]
    .join('  ')
    .trimEnd();
}

export const outcomeCommand = httpCommand({
  name: 'outcome',
  summary: "show an operation's stored outcome, or settle it with --abandon",
  usage: `Usage: fencegate outcome OP [--abandon] [--url URL] [--token T] [--json]

Prints the stored outcome of operationId OP: exit 0 committed, 1 rejected, 3 none stored yet
(a commit with it may still be in flight). --abandon settles it: the stored outcome if there is
one, else a rejection operation_abandoned stored so that no commit with OP ever applies.

Options:
  --abandon          settle the operation now`,
  flags: { abandon: { type: 'boolean' } },
  positionals: ['op'],
  work: async (client, flags) => {
    const op = requiredString(flags, 'op');
    const result =
      flags.abandon === true ? await client.abandonOperation(op) : await client.getOperation(op);
    if (result === null) {
      return {
        json: null,
        text: `no outcome stored for ${op} (yet): settle it with fencegate outcome ${op} --abandon`,
        exit: EXIT_OUTCOME_UNKNOWN,
      };
    }
    return outcomeAnswer(result);
  },
});
