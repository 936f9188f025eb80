import { ERROR_CATALOG, INTEGRATION_ERRORS, type ErrorSpec } from './errors.js';

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
  '| nothing was sent: connection refused, unknown host, a TLS certificate the client does not accept | sent again; then `store_unavailable` | the same | the same |',
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
  'after a lost reply or a gateway.',
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
    ...CLIENT_SECTION,
  ].join('\n');
}
