/**
 * Bodies are read as they arrive: none is decompressed. A body sent with a Content-Encoding
 * (gzip, deflate, br, …) would be parsed as the compressed bytes and fail, or worse, a body
 * labelled compressed but sent plain would be taken as it is; either way the sender meant
 * something else. A body with any encoding other than identity is refused before it is read.
 */
import type { FastifyInstance } from 'fastify';
import { FencegateError } from '../errors.js';

export function refuseEncodedBodies(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const { headers } = request;
    const encoding = headers['content-encoding'];
    const hasBody =
      headers['transfer-encoding'] !== undefined ||
      (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    if (!hasBody || encoding === undefined || encoding.trim().toLowerCase() === 'identity') {
      done();
      return;
    }
    done(
      new FencegateError(
        'unsupported_media_type',
        'the body must be sent uncompressed: Content-Encoding is not supported (only identity); ' +
          'send plain JSON without that header',
        { header: 'content-encoding' },
      ),
    );
  });
}
