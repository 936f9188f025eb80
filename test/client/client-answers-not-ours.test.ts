/**
 * Answers that do not come from a fencegate server, seen by FencegateClient: a redirect (an auth
 * proxy answering 302), a gateway error (502/503/504 from a proxy), and a TLS certificate the
 * client does not trust. API calls never follow redirects, so the token never leaves for another
 * origin and a redirected write is never taken for its answer; a write answered by a gateway may
 * have taken effect (unknown outcome); a TLS verification failure happens before anything is sent.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { tempDir } from '../helpers/temp-dir.js';

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
}

const servers: Server[] = [];

async function listen(
  server: Server,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
  seen: Seen[],
): Promise<number> {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    seen.push({
      method: request.method ?? '',
      path: request.url ?? '',
      authorization: request.headers.authorization,
    });
    request.resume();
    request.on('end', () => handler(request, response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const COMMITTED = JSON.stringify({
  outcome: 'committed',
  operationId: 'op-1',
  replayed: false,
  fence: 1,
  revisions: { summary: 1 },
  intents: [],
  auditSeq: 1,
});

/** Another origin that answers every request as if it had committed it. */
async function elsewhere(seen: Seen[]): Promise<string> {
  const port = await listen(
    createServer(),
    (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(COMMITTED);
    },
    seen,
  );
  return `http://127.0.0.1:${port}`;
}

/** A server answering every request with `status` (a redirect to `location` when given). */
async function answering(status: number, seen: Seen[], location?: string): Promise<string> {
  const port = await listen(
    createServer(),
    (request, response) => {
      const headers: Record<string, string> = { 'content-type': 'text/html' };
      if (location !== undefined) headers.location = `${location}${request.url ?? ''}`;
      response.writeHead(status, headers).end('<html>not fencegate</html>');
    },
    seen,
  );
  return `http://127.0.0.1:${port}`;
}

const COMMIT = {
  scope: 'wf-1/memory',
  fence: 1,
  operationId: 'op-1',
  writes: [{ name: 'summary', expectRevision: 0, value: { by: 'A' } }],
};

function client(url: string): FencegateClient {
  return new FencegateClient({ url, token: 'fg_worker_secret', retries: 1, timeoutMs: 2_000 });
}

describe('FencegateClient never follows a redirect', () => {
  for (const status of [301, 302, 303, 307, 308]) {
    it(`a ${status} on a commit is an unknown outcome, and nothing reaches the target`, async () => {
      const target: Seen[] = [];
      const front: Seen[] = [];
      const url = await answering(status, front, await elsewhere(target));
      const error = await client(url)
        .commit(COMMIT)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'outcome_unknown' });
      expect(target).toEqual([]);
      expect(front[0]).toMatchObject({ method: 'POST', path: '/v1/commit' });
    });
  }

  it('a redirect on another write is an unknown outcome; on a read an error naming it', async () => {
    const target: Seen[] = [];
    const url = await answering(302, [], await elsewhere(target));
    const acquire = await client(url)
      .acquire({ scope: 'wf-1/memory', holder: 'a', ttlMs: 1_000 })
      .catch((e: unknown) => e);
    expect(acquire).toMatchObject({ code: 'outcome_unknown' });
    expect((acquire as Error).message).toMatch(/redirect/);
    const read = await client(url)
      .getScope('wf-1/memory')
      .catch((e: unknown) => e);
    expect(read).toMatchObject({ code: 'internal_error' });
    expect((read as Error).message).toMatch(/HTTP 302.*redirect/);
    expect(target).toEqual([]);
  });
});

describe('FencegateClient and a gateway error', () => {
  for (const status of [502, 503, 504]) {
    it(`a ${status} without a fencegate body on a write is an unknown outcome`, async () => {
      const url = await answering(status, []);
      const acquire = await client(url)
        .acquire({ scope: 'wf-1/memory', holder: 'a', ttlMs: 1_000 })
        .catch((e: unknown) => e);
      expect(acquire).toMatchObject({ code: 'outcome_unknown', details: { status } });
      const commit = await client(url)
        .commit(COMMIT)
        .catch((e: unknown) => e);
      expect(commit).toMatchObject({ code: 'outcome_unknown' });
    });
  }
});

describe('FencegateClient and a certificate it does not trust', () => {
  it('a TLS verification failure says nothing was sent, not an unknown outcome', async () => {
    const dir = tempDir('fencegate-tls-');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          '/CN=127.0.0.1',
          '-days',
          '1',
          '-keyout',
          `${dir.path}/key.pem`,
          '-out',
          `${dir.path}/cert.pem`,
        ],
        { stdio: 'ignore' },
      );
      const seen: Seen[] = [];
      const server = createTlsServer({
        key: readFileSync(`${dir.path}/key.pem`),
        cert: readFileSync(`${dir.path}/cert.pem`),
      });
      const port = await listen(
        server,
        (_request, response) => {
          response.writeHead(200, { 'content-type': 'application/json' }).end(COMMITTED);
        },
        seen,
      );
      const error = await client(`https://127.0.0.1:${port}`)
        .commit(COMMIT)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'store_unavailable' });
      expect((error as Error).message).toMatch(/certificate|TLS/i);
      expect(seen).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });
});
