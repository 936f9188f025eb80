/**
 * A store kind written outside fencegate, opened by URL: `--store-module` (or
 * FENCEGATE_STORE_MODULES) imports a module that registers its kind on the published adapter API
 * (test/fixtures/memtest-store.js), and `serve` and the store commands then open `memtest:` URLs.
 * A module that cannot be imported, or registers nothing the URL is of, is a usage error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { runCli, startServe, type ServerProcess } from './cli-process.js';

const MODULE = 'test/fixtures/memtest-store.js';
const ADMIN = 'admin-token-of-the-store-module-test';

/** No stack trace: no "    at …" line. */
const STACK_LINE = /^\s+at /m;

describe('fencegate serve --store-module', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServe(['--store-module', MODULE, '--store', 'memtest:x', '--port', '0'], {
      FENCEGATE_ADMIN_TOKEN: ADMIN,
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function send(path: string, token: string, body?: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it('serves the registered kind: /healthz answers, and a commit over HTTP is committed', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const created = await send('/v1/admin/tokens', ADMIN, { tenant: 'acme', role: 'worker' });
    expect(created.status).toBe(201);
    const worker = String(created.body.token);
    const scope = 'wf-1/memory';
    const grant = await send('/v1/leases/acquire', worker, { scope, holder: 'w-1', ttlMs: 30_000 });
    expect(grant).toMatchObject({ status: 200, body: { scope, fence: 1 } });
    const write = { name: 'summary', expectRevision: 0, value: 'hello' };
    const commit = await send('/v1/commit', worker, {
      ...{ scope, fence: 1, operationId: 'op-1', writes: [write] },
    });
    expect(commit).toMatchObject({ status: 200, body: { outcome: 'committed' } });
    const record = await send(`/v1/scopes/${encodeURIComponent(scope)}/records/summary`, worker);
    expect(record.body).toMatchObject({ exists: true, value: 'hello', revision: 1 });
  });
});

describe('store modules of the other commands', () => {
  it('are named by FENCEGATE_STORE_MODULES too: token create opens the memtest: store', async () => {
    const run = await runCli(['token', 'create', '--tenant', 'acme', '--role', 'worker'], {
      FENCEGATE_STORE_MODULES: `./${MODULE}`,
      FENCEGATE_STORE: 'memtest:y',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^fg_/);
  });

  it('refuse a URL that no kind, registered ones included, opens: exit 2 naming the kinds', async () => {
    const run = await runCli(['token', 'list', '--store-module', MODULE, '--store', 'other:z']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `no store kind opens other:z: the store modules ${MODULE} registered memtest, and the ` +
        'store kinds are sqlite, postgres, etcd, memtest',
    );
    expect(run.stderr).not.toMatch(STACK_LINE);
  });
});

describe('the help of the commands that open a store', () => {
  it('names --store-module and FENCEGATE_STORE_MODULES', async () => {
    for (const command of [['serve'], ['token', 'create'], ['token', 'list'], ['verify']]) {
      const help = await inProcessCli([...command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--store-module M +import M \(a file path or a package\)/);
      expect(help.stdout).toContain('(env FENCEGATE_STORE_MODULES, comma-separated)');
    }
    expect((await inProcessCli(['serve', '--help'])).stdout).toContain(
      'or a URL of a kind a --store-module registers',
    );
  });
});

describe('a store module that is a mistake', () => {
  it('is a usage error when its file does not exist: exit 2 with the path, nothing started', async () => {
    const run = await inProcessCli([
      ...['serve', '--store-module', 'test/fixtures/missing-store.js'],
      ...['--store', 'memtest:x', '--port', '0'],
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^fencegate serve: store module test\/fixtures\/missing-store\.js: no file at \/\S+\/test\/fixtures\/missing-store\.js, and no installed package/,
    );
    expect(run.stderr).not.toMatch(STACK_LINE);
  });

  it('is a usage error when it registers no store kind, or is no package', async () => {
    const none = await inProcessCli([
      ...['verify', '--store-module', './test/fixtures/no-store-kind.js', '--store', 'memtest:x'],
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      'store module ./test/fixtures/no-store-kind.js registered no store kind: when imported, it ' +
        'must call registerStoreKind',
    );
    const unknown = await inProcessCli(['token', 'list', '--store', 'memtest:x'], {
      FENCEGATE_STORE_MODULES: 'fencegate-no-such-store-package',
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('store module fencegate-no-such-store-package: no file at ');
    expect(unknown.stderr).toContain(
      'and no installed package of this name; name a module file (a path from the current ' +
        'folder) or install the package',
    );
    expect(unknown.stderr).not.toMatch(STACK_LINE);
  });
});
