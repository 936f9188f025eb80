/** `fencegate acquire`, `takeover` and `release`: a scope's lease over HTTP (see http-command.ts). */
import type { Grant } from '../types.js';
import { requiredString } from './command.js';
import { httpCommand, integerOption, timeText } from './http-command.js';

const DEFAULT_TTL_MS = 30_000;

function grantText(verb: string, grant: Grant): string {
  return `${verb} ${grant.scope}: fence ${grant.fence}, holder ${grant.holder}, lease until ${timeText(grant.leaseExpiresAt)}`;
}

export const acquireCommand = httpCommand({
  name: 'acquire',
  summary: 'acquire a scope for a holder; prints its fence',
  usage: `Usage: fencegate acquire SCOPE --holder H [--ttl-ms MS] [--url URL] [--token T] [--json]

Acquires SCOPE for holder H when it has no live holder; the fence printed goes with every commit.

Options:
  --holder H         who holds the scope (a worker's name)
  --ttl-ms MS        the lease's length (default ${DEFAULT_TTL_MS})`,
  flags: { holder: { type: 'string' }, 'ttl-ms': { type: 'string' } },
  positionals: ['scope'],
  work: async (client, flags) => {
    const grant = await client.acquire({
      scope: requiredString(flags, 'scope'),
      holder: requiredString(flags, 'holder'),
      ttlMs: integerOption(flags, 'ttl-ms', { fallback: DEFAULT_TTL_MS }),
    });
    return { json: grant, text: grantText(grant.reacquired ? 'still holds' : 'acquired', grant) };
  },
});

export const takeoverCommand = httpCommand({
  name: 'takeover',
  summary: 'take a scope over from its holder (operator, or a worker with the right)',
  usage: `Usage: fencegate takeover SCOPE --holder H [--ttl-ms MS] [--reason TEXT] [--url URL] [--token T] [--json]

Moves SCOPE to a new fence held by H, live holder or not: the old holder's commits are refused
stale_fence from then on.

Options:
  --holder H         the new holder
  --ttl-ms MS        the new lease's length (default ${DEFAULT_TTL_MS})
  --reason TEXT      kept in the audit entry`,
  flags: { holder: { type: 'string' }, 'ttl-ms': { type: 'string' }, reason: { type: 'string' } },
  positionals: ['scope'],
  work: async (client, flags) => {
    const grant = await client.takeover(requiredString(flags, 'scope'), {
      holder: requiredString(flags, 'holder'),
      ttlMs: integerOption(flags, 'ttl-ms', { fallback: DEFAULT_TTL_MS }),
      ...(typeof flags.reason === 'string' ? { reason: flags.reason } : {}),
    });
    return { json: grant, text: grantText('took over', grant) };
  },
});

export const releaseCommand = httpCommand({
  name: 'release',
  summary: "release a holder's lease on a scope",
  usage: `Usage: fencegate release SCOPE --fence N --holder H [--url URL] [--token T] [--json]

Ends H's lease on SCOPE at fence N; the next acquire takes a new fence.

Options:
  --fence N          the fence of the grant
  --holder H         its holder`,
  flags: { fence: { type: 'string' }, holder: { type: 'string' } },
  positionals: ['scope'],
  work: async (client, flags) => {
    const scope = requiredString(flags, 'scope');
    const result = await client.release({
      scope,
      holder: requiredString(flags, 'holder'),
      fence: integerOption(flags, 'fence'),
    });
    const text = result.alreadyReleased ? `${scope} was already released` : `released ${scope}`;
    return { json: result, text };
  },
});
