/**
 * The session cookie's Secure attribute under `fencegate serve`: set when a trusted proxy says the
 * browser came over https (--trust-proxy), never on the word of an untrusted X-Forwarded-Proto.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { issueToken } from '../../src/server/tokens.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';

const ADMIN = 'admin-token-for-proxy-tests-0123';
let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function signIn(trustProxy: boolean, forwardedProto: string | undefined) {
  running = await startServer({
    store: 'sqlite::memory:',
    host: '127.0.0.1',
    port: 0,
    adminToken: ADMIN,
    trustProxy,
  });
  const { token } = await issueToken(running.store, { tenant: 'acme', role: 'operator' });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
  };
  if (forwardedProto !== undefined) headers['x-forwarded-proto'] = forwardedProto;
  const response = await fetch(`${running.url}/ui/sign-in`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  const cookie = response.headers.get('set-cookie') ?? '';
  expect(cookie).toContain('fencegate_session=');
  return cookie.split(';').map((part) => part.trim());
}

describe('the session cookie behind a proxy', () => {
  it('is Secure when a trusted proxy forwards https', async () => {
    expect(await signIn(true, 'https')).toContain('Secure');
  });

  it('takes the first hop of a chain of proxies', async () => {
    expect(await signIn(true, 'https, http')).toContain('Secure');
  });

  it('is not Secure when the trusted proxy forwards http', async () => {
    expect(await signIn(true, 'http')).not.toContain('Secure');
  });

  it('ignores X-Forwarded-Proto without --trust-proxy', async () => {
    expect(await signIn(false, 'https')).not.toContain('Secure');
  });
});
