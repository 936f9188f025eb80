/**
 * The CLI as a user runs it: the built bin/fencegate.js in a child process (run `npm run build`
 * first). Startup line, first-run tokens, `token create` against a running server's store, a
 * SIGTERM that lets an in-flight request finish, help texts and exit codes.
 */
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runCli, startServe, type ServerProcess } from './cli-process.js';

const ADMIN = 'e2e-admin-token-0123456789abcdef';
const running: ServerProcess[] = [];
const dirs: { cleanup: () => void }[] = [];

function storeUrl(): { url: string; path: string } {
  const dir = tempDir('fencegate-e2e-');
  dirs.push(dir);
  const path = join(dir.path, 'fencegate.db');
  return { url: `sqlite:${path}`, path };
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = await startServe(args, env);
  running.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
  for (const dir of dirs.splice(0)) dir.cleanup();
});

async function call(
  server: ServerProcess,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe('fencegate serve', () => {
  it('prints the startup line with the real port, and first-run tokens that work, once', async () => {
    const store = storeUrl();
    const tokensFile = join(dirname(store.path), 'first-run-tokens.txt');
    const server = await serve([
      ...['--port', '0', '--store', store.url],
      ...['--first-run-tokens-file', tokensFile],
    ]);
    const printed = server.output().stdout;
    expect(printed).toMatch(/^fencegate listening on http:\/\/127\.0\.0\.1:[1-9][0-9]*$/m);
    expect(printed).not.toContain('fg_');
    expect(server.url).not.toMatch(/:0$/);
    // Not a terminal: the secrets went to the file only.
    const stdout = readFileSync(tokensFile, 'utf8');
    const admin = /admin token \(manages tokens only\):\s+(fg_\S+)/.exec(stdout)?.[1] ?? '';
    const operator = /operator token, tenant "dev":\s+(fg_\S+)/.exec(stdout)?.[1] ?? '';
    expect(admin).toMatch(/^fg_/);
    expect(operator).toMatch(/^fg_/);
    expect(stdout).toContain(
      `curl -s -H "Authorization: Bearer ${operator}" ${server.url}/v1/scopes`,
    );
    expect(stdout).toContain(`Dashboard: ${server.url}/ui (sign in with the operator token)`);
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/ui']);

    expect(await call(server, 'GET', '/v1/scopes', operator)).toEqual({
      status: 200,
      body: { items: [], nextCursor: null },
    });
    expect((await call(server, 'GET', '/v1/scopes', admin)).status).toBe(403);
    const created = await call(server, 'POST', '/v1/admin/tokens', admin, {
      tenant: 'acme',
      role: 'worker',
    });
    expect(created).toMatchObject({ status: 201, body: { tenant: 'acme', role: 'worker' } });

    expect(await server.stop()).toBe(0);
    // Tokens are stored hashed: the store never holds them, and a restart prints none.
    const again = await serve(['--port', '0', '--store', store.url]);
    expect(again.output().stdout).not.toContain('first run');
    expect((await call(again, 'GET', '/v1/scopes', operator)).status).toBe(200);
    expect((await call(again, 'GET', '/v1/scopes', admin)).status).toBe(403);
  });

  it('takes its settings from the environment, and FENCEGATE_ADMIN_TOKEN skips the first-run tokens', async () => {
    const store = storeUrl();
    const server = await serve([], {
      FENCEGATE_STORE: store.url,
      FENCEGATE_PORT: '0',
      FENCEGATE_HOST: '127.0.0.1',
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
    expect(server.output().stdout).not.toContain('first run');
    const created = await call(server, 'POST', '/v1/admin/tokens', ADMIN, {
      tenant: 'acme',
      role: 'operator',
    });
    expect(created.status).toBe(201);
    const token = (created.body as { token: string }).token;
    expect((await call(server, 'GET', '/readyz', token)).status).toBe(200);
    const metrics = await fetch(`${server.url}/metrics`);
    expect(await metrics.text()).toContain('fencegate_http_request_duration_seconds');
  });

  it("creates a token with `token create` against a running server's store, usable at once", async () => {
    const store = storeUrl();
    const server = await serve(['--port', '0', '--store', store.url], {
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
    const created = await runCli([
      'token',
      'create',
      '--tenant',
      'acme',
      '--role',
      'worker',
      '--store',
      store.url,
      '--label',
      'ci',
    ]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^fg_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('created worker token');
    expect(created.stderr).not.toContain(token);

    const grant = await call(server, 'POST', '/v1/leases/acquire', token, {
      scope: 'wf-1',
      holder: 'w1',
      ttlMs: 10_000,
    });
    expect(grant).toMatchObject({ status: 200, body: { fence: 1 } });
    expect((await call(server, 'GET', '/v1/audit', token)).status).toBe(403);
  });

  it('lets an in-flight request finish on SIGTERM, then closes the store and exits 0', async () => {
    const store = storeUrl();
    const server = await serve(['--port', '0', '--store', store.url], {
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
    const created = await runCli([
      'token',
      'create',
      '--tenant',
      'acme',
      '--role',
      'worker',
      '--store',
      store.url,
    ]);
    const token = created.stdout.trim();
    const body = JSON.stringify({ scope: 'drain-me', holder: 'w1', ttlMs: 10_000 });
    const { port } = new URL(server.url);

    // Headers first, with Expect: 100-continue: the "continue" proves the server has the request.
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/leases/acquire',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          expect: '100-continue',
        },
      });
      req.on('continue', () => {
        void (async () => {
          server.child.kill('SIGTERM');
          await server.waitFor('SIGTERM received', 'stderr');
          req.end(body);
        })();
      });
      req.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });

    const reply = await answer;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ scope: 'drain-me', fence: 1 });
    expect(await server.exited).toBe(0);
    expect(server.output().stderr).toContain('stopped');

    const reopened = SqliteStore.open({ path: store.path });
    try {
      expect(await reopened.getScope('acme', 'drain-me')).toMatchObject({ fence: 1, holder: 'w1' });
    } finally {
      await reopened.close();
    }
  });

  it('exits 1 with a one-line message naming the port when the port is taken', async () => {
    const store = storeUrl();
    const server = await serve(['--port', '0', '--store', store.url], {
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
    const { port } = new URL(server.url);
    const second = await runCli(['serve', '--port', port, '--store', storeUrl().url], {
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
    expect(second).toMatchObject({ code: 1, stdout: '' });
    expect(second.stderr).toMatch(
      new RegExp(
        `^fencegate serve: port ${port} on 127\\.0\\.0\\.1 is already in use: [^\\n]*\\n$`,
      ),
    );
  });
});

describe('help texts and exit codes', () => {
  it('prints help on stdout with exit 0', async () => {
    const top = await runCli(['--help']);
    expect(top).toMatchObject({ code: 0, stderr: '' });
    expect(top.stdout).toContain('fencegate serve');
    expect(top.stdout).toContain('fencegate token create');
    const serveHelp = await runCli(['serve', '--help']);
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.stdout).toContain(
      'Usage: fencegate serve [--store URL] [--host HOST] [--port PORT]',
    );
    for (const env of [
      'FENCEGATE_STORE',
      'FENCEGATE_HOST',
      'FENCEGATE_PORT',
      'FENCEGATE_ADMIN_TOKEN',
    ]) {
      expect(serveHelp.stdout).toContain(env);
    }
    const tokenHelp = await runCli(['token', 'create', '-h']);
    expect(tokenHelp.code).toBe(0);
    expect(tokenHelp.stdout).toContain(
      'Usage: fencegate token create --tenant T --role worker|operator',
    );
  });

  it('answers mistakes with a message and the usage on stderr, exit 2', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /Usage: fencegate <command>/],
      [['launch'], {}, /unknown command "launch"/],
      [['token'], {}, /unknown command "token"/],
      [['token', 'rotate'], {}, /unknown command "token rotate"/],
      [['token', 'revoke'], {}, /ID is missing[\s\S]*Usage: fencegate token revoke/],
      [['serve', '--bogus'], {}, /Unknown option '--bogus'[\s\S]*Usage: fencegate serve/],
      [['serve', 'extra'], {}, /Usage: fencegate serve/],
      [['serve', '--port', '70000'], {}, /--port must be an integer from 0 to 65535/],
      [['serve', '--port', '0', '--store', 'mysql://x'], {}, /unsupported store URL/],
      [['serve', '--port', '0'], { FENCEGATE_ADMIN_TOKEN: 'short' }, /at least 16 characters/],
      [['serve', '--port', '0'], { FENCEGATE_TEST_CLOCK: 'fast' }, /FENCEGATE_TEST_CLOCK/],
      [['token', 'create', '--tenant', 'acme'], {}, /--role is required/],
      [
        ['token', 'create', '--tenant', 'acme', '--role', 'admin'],
        {},
        /--role must be worker or operator/,
      ],
      [
        ['token', 'create', '--tenant', 'Acme!', '--role', 'worker', '--store', 'sqlite::memory:'],
        {},
        /tenant must be/,
      ],
    ];
    const runs = await Promise.all(cases.map(([args, env]) => runCli(args, env)));
    cases.forEach(([args, , message], i) => {
      const run = runs[i]!;
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(run.stderr).toMatch(message);
    });
  });
});
