import {
  COMMIT_AUTHORITY_LOST_CODES,
  ERROR_CATALOG,
  INTEGRATION_ERRORS,
  RENEWAL_LEASE_LOST_CODES,
  type ErrorCode,
  type ErrorSpec,
} from './errors.js';

function codeList(codes: readonly ErrorCode[]): string {
  return codes.map((code) => `\`${code}\``).join(', ');
}

/** The two lease-lost sets of the catalog, for clients that decide when to stop a worker. */
const LEASE_LOST_SECTION = [
  '## Codes that mean authority is gone',
  '',
  'Two sets of the catalog say when a worker has lost its authority over a scope and should stop',
  'writing. Any other error (`store_unavailable`, say) leaves the lease as it was.',
  '',
  '| set | codes | answered by |',
  '|---|---|---|',
  `| \`RENEWAL_LEASE_LOST_CODES\` | ${codeList(RENEWAL_LEASE_LOST_CODES)} | a renewal: the fence moved on, another holder or none holds the scope (a release or a cancel answers \`not_holder\`, as does a grant bound to another worker token), or the scope is deleted or was never created. A renewal never answers \`authority_revoked\` or \`lease_expired\`: a lease that ran out and that nobody took since is renewed. |`,
  `| \`COMMIT_AUTHORITY_LOST_CODES\` | ${codeList(COMMIT_AUTHORITY_LOST_CODES)} | a commit's rejection: its fence checks, made before any record is read. Any later rejection (\`stale_revision\`, say) leaves the writer's authority as it was. |`,
  '',
  'Both are exported by `fencegate` and `fencegate/client` (with `isLeaseLostOnRenewal` and',
  '`isAuthorityLostOnCommit`), and printed with the route table by',
  '`npx tsx scripts/route-table-json.ts` (`leaseLostCodes.renewal`, `leaseLostCodes.commit`), for',
  'clients generated in other languages. The Python client carries both in',
  '`fencegate/_route_table.py`, written from that JSON.',
  '',
];

/**
 * What the clients (TypeScript FencegateClient, Python Client and AsyncClient) report when no
 * fencegate answer says what happened: the same codes, chosen by whether the request can have
 * taken effect.
 */
const CLIENT_SECTION = [
  '## What the clients report without a fencegate answer',
  '',
  "The clients (`FencegateClient`, Python's `Client` and `AsyncClient`) never follow a redirect,",
  "so the token never reaches the redirect's target, and they map every exchange that ends",
  'without a fencegate answer onto the codes above, by whether the request can have taken effect:',
  '',
  '| what happened | read | lease operation, claim, other write | commit |',
  '|---|---|---|---|',
  '| nothing was sent: connection refused, unknown host, a TLS certificate the client does not accept, a connection that never opened within the timeout (`FencegateClient`) | sent again; then `store_unavailable` | the same | the same |',
  '| sent, then the connection was lost or timed out | sent again | `outcome_unknown` | decided by its stored outcome |',
  '| answered by a redirect (3xx), never followed | `internal_error`, saying so | `outcome_unknown` | decided by its stored outcome |',
  '| answered 502, 503 or 504 without a fencegate error body (a proxy or gateway) | sent again | `outcome_unknown` | decided by its stored outcome |',
  '',
  '"Decided by its stored outcome": the client reads the outcome stored for the commit\'s',
  'operationId (`getOperation`, `get_operation`) and returns it when there is one; with none',
  'stored the commit has not applied yet, and the same commit is sent again (its operationId',
  'applies it at most once). Still unknown after the retries, the client calls',
  '`abandonOperation` (`abandon_operation`) and returns what it answers: the stored outcome if',
  'the commit was stored meanwhile, otherwise `operation_abandoned`, stored so that commit can',
  'never apply. If abandon cannot be reached either, the commit raises `outcome_unknown`. A',
  'write that is idempotent by construction (completing an intent, registering a policy, a',
  'cutover by its id, job events that carry `at`, abandon itself) is sent again like a read',
  'after a lost reply or a gateway; when no later attempt reaches the server, it raises',
  '`outcome_unknown`, never `store_unavailable`, since the attempt whose reply was lost may have',
  'taken effect.',
  '',
  '`FencegateClient` speaks HTTP through `node:http` and `node:https` keep-alive agents shared by',
  'every client of the process (a token travels with each request, never with a connection). One',
  "timeout (`timeoutMs`, 10 s by default) bounds each exchange, the answer's last byte included. It",
  'calls a request unsent only when it never had a connection: a new connection not yet open (over',
  'TLS, not yet through its handshake); any failure after that, on a reused connection too, is a',
  'lost request. It closes a connection idle for 4 s itself, so that a request is not sent on one',
  'the server is closing at that moment (Fastify closes idle ones after 72 s), and it drops an',
  'answer longer than 64 MiB as lost (a page of records holds about 1 MiB by default).',
  '',
];

/** docs/errors.md as the catalog says it should read; a test keeps the file equal to this. */
export function renderErrorsDoc(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, spec]: [string, ErrorSpec]) => {
    return `| \`${code}\` | ${spec.httpStatus} | ${spec.retryable ? 'yes' : 'no'} | ${spec.description} |`;
  });
  return [
    '# Error codes',
    '',
    'Every error fencegate answers, from the library, the HTTP API and the CLI, carries one of',
    'these codes. Over HTTP the body is `{"error": {"code", "message", "details"}}`; in the',
    'library it is a `FencegateError` with the same `code`, `httpStatus`, `retryable` and',
    '`details`. A rejected commit (409) answers `{"outcome": "rejected", "error": {…}}` instead.',
    '',
    'This file is generated from `src/errors.ts` (`npx tsx scripts/write-errors-doc.ts`); a test',
    'fails when they differ.',
    '',
    '| code | HTTP status | retryable | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## Exceptions of the integrations',
    '',
    'An integration raises a class of its own for a situation of its own; it carries one of the',
    'codes above as its `code`.',
    '',
    '| exception | codes | meaning |',
    '|---|---|---|',
    ...INTEGRATION_ERRORS.map((spec) => {
      const codes = spec.codes.map((code) => `\`${code}\``).join(', ');
      return `| \`${spec.name}\` (${spec.language}) | ${codes} | ${spec.description} |`;
    }),
    '',
    ...LEASE_LOST_SECTION,
    ...CLIENT_SECTION,
  ].join('\n');
}
