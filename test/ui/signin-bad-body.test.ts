/**
 * Dashboard sign-in with a body that is too large, of another type or malformed: a 4xx page that
 * says what to fix, as the JSON API answers, never a 500 and never an error logged with a stack.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { capturedLogger, serverFixture, type ServerFixture } from '../server/fixture.js';

let fx: ServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixtureWithLog(): Promise<{ f: ServerFixture; lines: string[] }> {
  const { logger, lines } = capturedLogger();
  return { f: (fx = await serverFixture({ logger })), lines };
}

const CASES: { name: string; contentType: string; payload: string; status: number }[] = [
  {
    name: 'an oversized form',
    contentType: 'application/x-www-form-urlencoded',
    payload: `token=${'x'.repeat(10_000)}`,
    status: 413,
  },
  { name: 'a JSON body', contentType: 'application/json', payload: '{"token":"x"}', status: 415 },
  { name: 'a text body', contentType: 'text/plain', payload: 'token=x', status: 415 },
  {
    name: 'a JSON body of another type',
    contentType: 'application/json',
    payload: '[5]',
    status: 415,
  },
  { name: 'malformed JSON', contentType: 'application/json', payload: '{"token":', status: 400 },
  {
    name: 'an unknown media type',
    contentType: 'application/xml',
    payload: '<token/>',
    status: 415,
  },
  { name: 'no content type', contentType: '', payload: 'token=x', status: 415 },
];

describe('dashboard sign-in with a bad body', () => {
  for (const { name, contentType, payload, status } of CASES) {
    it(`answers ${status} to ${name}, with a page saying what to send`, async () => {
      const { f, lines } = await fixtureWithLog();
      const response = await f.app.inject({
        method: 'POST',
        url: '/ui/sign-in',
        headers: contentType === '' ? {} : { 'content-type': contentType },
        payload,
      });
      expect(response.statusCode).toBe(status);
      expect(response.headers['content-type']).toContain('text/html');
      expect(response.body).toContain('sign in');
      expect(response.body).not.toMatch(/at .*\.(js|ts):\d+/);
      expect(response.headers['set-cookie']).toBeUndefined();
      const logged = lines.join('');
      expect(logged).not.toContain('"stack"');
      expect(logged).not.toContain('unexpected error');
    });
  }

  it('still signs in with a well-formed form after refusing bad ones', async () => {
    const { f } = await fixtureWithLog();
    const response = await f.app.inject({
      method: 'POST',
      url: '/ui/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: f.tokens.operatorA }).toString(),
    });
    expect(response.statusCode).toBe(303);
  });
});
