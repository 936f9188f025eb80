/**
 * A body sent compressed (any Content-Encoding but identity) is refused 415
 * unsupported_media_type before it is read, and nothing changes; an identity encoding is plain JSON.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, serverFixture, type ServerFixture } from './fixture.js';

let server: ServerFixture;

beforeAll(async () => {
  server = await serverFixture();
});

afterAll(async () => {
  await server.close();
});

function acquire(scope: string, encoding: string, payload: Buffer | string) {
  return server.app.inject({
    method: 'POST',
    url: '/v1/leases/acquire',
    headers: {
      authorization: `Bearer ${server.tokens.operatorA}`,
      'content-type': 'application/json',
      'content-encoding': encoding,
    },
    payload,
  });
}

describe('a request body with a Content-Encoding', () => {
  it('is refused 415 unsupported_media_type when compressed, and nothing changes', async () => {
    const scope = 'wf-gzip/memory';
    const json = JSON.stringify({ scope, holder: 'w', ttlMs: 30_000 });
    for (const [encoding, payload] of [
      ['gzip', gzipSync(json)],
      ['GZIP', gzipSync(json)],
      ['deflate', json],
      ['br', json],
      ['gzip, identity', gzipSync(json)],
      ['x-made-up', json],
    ] as const) {
      const response = await acquire(scope, encoding, payload);
      expect({ encoding, status: response.statusCode }).toEqual({ encoding, status: 415 });
      const error = errorOf(response);
      expect(error.code).toBe('unsupported_media_type');
      expect(error.message).toContain('Content-Encoding');
      expect(error.message).toContain('uncompressed');
    }
    const scopeState = await server.send(
      'GET',
      `/v1/scopes/${encodeURIComponent(scope)}`,
      server.tokens.operatorA,
    );
    expect(scopeState.statusCode).toBe(404);
  });

  it('is read as plain JSON when the encoding is identity', async () => {
    const scope = 'wf-identity/memory';
    const response = await acquire(
      scope,
      'identity',
      JSON.stringify({ scope, holder: 'w', ttlMs: 30_000 }),
    );
    expect(response.statusCode).toBe(200);
  });
});
