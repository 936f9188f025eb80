/**
 * The JSON body parser: Fastify's own (prototype-poisoning keys refused, empty bodies reported),
 * behind a scan of the raw text for integers no JavaScript number holds exactly. JSON.parse would
 * round them silently, so they are refused, path named, before parsing (core/safe-integers.ts).
 */
import type { FastifyInstance } from 'fastify';
import { findUnsafeInteger, unsafeIntegerError } from '../core/safe-integers.js';

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
    void parse(request, text, done);
  });
}
