import { ERROR_CATALOG, INTEGRATION_ERRORS, type ErrorSpec } from './errors.js';

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
  ].join('\n');
}
