/**
 * Writes the Python client's exception classes from the error catalog, one class per code:
 * `npx tsx scripts/write-python-errors.ts`. The client's tests compare them with docs/errors.md.
 */
import { writeFileSync } from 'node:fs';
import { ERROR_CATALOG, type ErrorSpec } from '../src/errors.js';

export function pythonClassName(code: string): string {
  const words = code.split('_').map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return words.at(-1) === 'Error' ? words.join('') : `${words.join('')}Error`;
}

const entries = Object.entries(ERROR_CATALOG) as [string, ErrorSpec][];
const classes = entries.map(([code, spec]) =>
  [
    `class ${pythonClassName(code)}(FencegateError):`,
    `    """${spec.description.replaceAll('"', '\\"')}"""`,
    '',
    `    code = ${JSON.stringify(code)}`,
    `    http_status = ${spec.httpStatus}`,
    `    retryable = ${spec.retryable ? 'True' : 'False'}`,
  ].join('\n'),
);

const text = [
  '"""One exception class per code of the error catalog.',
  '',
  'Generated from src/errors.ts by scripts/write-python-errors.ts; do not edit. The tests compare',
  'it with docs/errors.md, so the two cannot drift apart.',
  '"""',
  '',
  'from typing import Dict, Type',
  '',
  'from ._base import FencegateError',
  '',
  '',
  classes.join('\n\n\n'),
  '',
  '',
  '#: Every exception class by its catalog code.',
  'ERROR_CLASSES: Dict[str, Type[FencegateError]] = {',
  ...entries.map(([code]) => `    ${JSON.stringify(code)}: ${pythonClassName(code)},`),
  '}',
  '',
  '__all__ = [',
  '    "ERROR_CLASSES",',
  '    "FencegateError",',
  ...entries.map(([code]) => `    ${JSON.stringify(pythonClassName(code))},`),
  ']',
  '',
].join('\n');

writeFileSync(new URL('../clients/python/fencegate/errors.py', import.meta.url), text);
