/**
 * The JSON body parser: Fastify's own (prototype-poisoning keys refused, empty bodies reported),
 * behind a scan of the raw text for integers no JavaScript number holds exactly. JSON.parse would
 * round them silently, so they are refused, path named, before parsing (core/safe-integers.ts).
 */
import type { FastifyInstance } from 'fastify';
import { findUnsafeInteger, unsafeIntegerError } from '../core/safe-integers.js';
import { FencegateError } from '../errors.js';
import { jsonSyntaxPosition } from './json-syntax-position.js';

export function useExactJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    const unsafe = findUnsafeInteger(text);
    if (unsafe !== null) {
      done(unsafeIntegerError(unsafe.path, unsafe.literal), undefined);
      return;
    }
    void parse(request, text, (error, parsed) => {
      const invalid = (error as { code?: string } | null)?.code === 'FST_ERR_CTP_INVALID_JSON_BODY';
      done(invalid ? (invalidJson(text) ?? error) : error, parsed);
    });
  });
}

/**
 * Why the body is not JSON: where (its position, never its text, which may hold a secret). null
 * when the text is JSON, so what refused it was a prototype key.
 */
function invalidJson(text: string): FencegateError | null {
  const position = jsonSyntaxPosition(text);
  if (position === null) return null;
  return new FencegateError(
    'invalid_request',
    `the body is not valid JSON: a syntax error at position ${position} (from 0)`,
    { field: 'body', position },
  );
}
