/**
 * `fencegate serve --dispatch --targets FILE` as a user runs it (the built bin/fencegate.js; run
 * `npm run build` first): intents committed through FencegateClient, with a first-run token and a
 * `token create` token, are delivered to a real HTTP receiver with their effect key as
 * Idempotency-Key; the dispatcher's metrics share the server's /metrics; SIGTERM stops the
 * dispatchers, then the server, and exits 0 with every outcome recorded. Mistakes in the dispatch
 * flags or the targets file are usage errors (exit 2) that name the file and the field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { FencegateClient } from '../../src/client/index.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runCli, startServe, type ServerProcess } from './cli-process.js';

interface Delivery {
  key: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A webhook receiver on 127.0.0.1 that answers 200 and records what it got. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  readonly #waiters: (() => void)[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const key = request.headers['idempotency-key'];
        receiver.deliveries.push({
          key: typeof key === 'string' ? key : undefined,
          headers: request.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
        });
        for (const wake of receiver.#waiters.splice(0)) wake();
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: `rcpt-${receiver.deliveries.length}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  async waitFor(count: number): Promise<void> {
    while (this.deliveries.length < count) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

const servers: ServerProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function workDir(): string {
  const dir = tempDir('fencegate-e2e-dispatch-');
  cleanups.push(dir.cleanup);
  return dir.path;
}

function writeTargets(dir: string, targets: unknown): string {
  const file = join(dir, 'targets.json');
  writeFileSync(file, JSON.stringify(targets));
  return file;
}

/** Commits one intent for crm-webhook under a fresh lease. */
async function commitIntent(client: FencegateClient, effectKey: string): Promise<void> {
  const grant = await client.acquire({ scope: `wf-${effectKey}`, holder: 'w1', ttlMs: 60_000 });
  const result = await client.commit({
    scope: grant.scope,
    fence: grant.fence,
    operationId: `op-${effectKey}`,
    intents: [{ effectKey, target: 'crm-webhook', payload: { effectKey } }],
  });
  expect(result.outcome).toBe('committed');
}

// Each case starts server processes (about a second of CPU each); under the whole suite's load a
// case has taken half the default 30 s.
describe('fencegate serve --dispatch', { timeout: 60_000 }, () => {
  it('delivers committed intents of each dispatch tenant to the receiver, then exits 0 on SIGTERM', async () => {
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const dir = workDir();
    const targets = writeTargets(dir, {
      targets: {
        'crm-webhook': {
          type: 'webhook',
          url: receiver.url,
          timeoutMs: 5_000,
          headers: { 'x-api-key': 'secret-key-value' },
        },
      },
    });
    const path = join(dir, 'fencegate.db');
    const store = `sqlite:${path}`;
    const server = await startServe(
      [
        ...['--port', '0', '--store', store, '--dispatch', '--targets', targets],
        ...['--dispatch-tenant', 'dev', '--dispatch-tenant', 'acme'],
        ...['--first-run-tokens-file', join(dir, 'first-run-tokens.txt')],
      ],
      { FENCEGATE_LOG_LEVEL: 'info' },
    );
    servers.push(server);
    const { stdout } = server.output();
    expect(stdout).toContain('fencegate dispatching intents of tenant dev to crm-webhook');
    expect(stdout).toContain('fencegate dispatching intents of tenant acme to crm-webhook');
    const tokens = readFileSync(join(dir, 'first-run-tokens.txt'), 'utf8');
    const devToken = /operator token, tenant "dev":\s+(fg_\S+)/.exec(tokens)?.[1] ?? '';
    expect(devToken).toMatch(/^fg_/);
    const created = await runCli(['token', 'create', '--tenant', 'acme', '--role', 'worker'], {
      FENCEGATE_STORE: store,
    });
    expect(created.code).toBe(0);
    const acmeToken = created.stdout.trim();

    const dev = new FencegateClient({ url: server.url, token: devToken });
    const acme = new FencegateClient({ url: server.url, token: acmeToken });
    await commitIntent(dev, 'notify-dev');
    await commitIntent(acme, 'notify-acme');
    await receiver.waitFor(2);
    expect(receiver.deliveries.map((delivery) => [delivery.key, delivery.body]).sort()).toEqual([
      ['notify-acme', { effectKey: 'notify-acme' }],
      ['notify-dev', { effectKey: 'notify-dev' }],
    ]);
    for (const delivery of receiver.deliveries) {
      expect(delivery.headers['x-api-key']).toBe('secret-key-value');
      expect(delivery.headers['content-type']).toBe('application/json');
    }

    // The dispatchers report to the server's registry: one scrape shows both. The outcome is
    // recorded just after the receiver answered, so the counter is read until it shows it.
    let metrics = '';
    while (!/fencegate_dispatch_outcomes_total\{[^}]*outcome="delivered"[^}]*\} 2/.test(metrics)) {
      metrics = await (await fetch(`${server.url}/metrics`)).text();
      await delay(20);
    }
    expect(metrics).toMatch(/^fencegate_verify_violations 0$/m);
    expect(metrics).toContain('fencegate_dispatch_effector_seconds_bucket');
    expect(await dev.getIntent('notify-dev')).toMatchObject({
      status: 'delivered',
      providerRef: expect.stringMatching(/^rcpt-/) as unknown,
    });
    expect(await dev.verify()).toMatchObject({ ok: true, violations: [] });

    expect(await server.stop('SIGTERM')).toBe(0);
    const { stdout: log, stderr } = server.output();
    expect(stderr).toContain('stopped');
    expect(log).toContain('dispatcher started');
    expect(log + stderr).not.toContain('secret-key-value');

    const reopened = SqliteStore.open({ path });
    try {
      expect(await reopened.getIntent('acme', 'notify-acme')).toMatchObject({
        status: 'delivered',
        attempts: 1,
      });
      expect((await verifyStore(reopened)).violations).toEqual([]);
    } finally {
      await reopened.close();
    }
  });

  it('without --dispatch-tenant delivers the intents of every tenant, also one created after start', async () => {
    const receiver = await Receiver.start();
    cleanups.push(() => receiver.close());
    const dir = workDir();
    const targets = writeTargets(dir, {
      targets: {
        'crm-webhook': { type: 'webhook', url: receiver.url, tenants: ['acme'] },
        audit: { type: 'webhook', url: receiver.url },
      },
    });
    const admin = 'admin-token-for-every-tenant-0123';
    const server = await startServe(
      ['--port', '0', '--store', `sqlite:${join(dir, 'fencegate.db')}`, '--dispatch'].concat([
        '--targets',
        targets,
      ]),
      { FENCEGATE_ADMIN_TOKEN: admin },
    );
    servers.push(server);
    // stderr is a pipe of its own: the warning, printed before the startup line, may arrive after it.
    await server.waitFor('target audit has no "tenants" list', 'stderr');
    const { stdout, stderr } = server.output();
    expect(stdout).toContain('fencegate dispatching intents of every tenant to crm-webhook, audit');
    expect(stderr).not.toContain('target crm-webhook has no');

    // Tenant acme exists only from now on: the admin creates its first token.
    const created = await fetch(`${server.url}/v1/admin/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 'acme', role: 'worker' }),
    });
    expect(created.status).toBe(201);
    const { token } = (await created.json()) as { token: string };
    const acme = new FencegateClient({ url: server.url, token });
    await commitIntent(acme, 'notify-acme-later');
    await receiver.waitFor(1);
    expect(receiver.deliveries.map((delivery) => delivery.key)).toEqual(['notify-acme-later']);
    while ((await acme.getIntent('notify-acme-later'))?.status !== 'delivered') await delay(20);
    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('refuses dispatch flags and targets files that are wrong, naming the file and the field, with exit 2', async () => {
    const dir = workDir();
    const store = `sqlite:${join(dir, 'fencegate.db')}`;
    const good = writeTargets(dir, {
      targets: { crm: { type: 'webhook', url: 'http://127.0.0.1:9/hook' } },
    });
    const badFile = join(dir, 'bad-targets.json');
    writeFileSync(
      badFile,
      JSON.stringify({ targets: { crm: { type: 'webhook', url: 'ftp://example.test/x' } } }),
    );
    const cases: [args: string[], message: RegExp][] = [
      [['--dispatch'], /--dispatch needs --targets FILE/],
      [['--targets', good], /--targets and --dispatch-tenant need --dispatch/],
      [['--dispatch', '--targets', badFile], /bad-targets\.json: targets\.crm\.url/],
      [['--dispatch', '--targets', join(dir, 'missing.json')], /missing\.json cannot be read/],
      [['--dispatch', '--targets', good, '--dispatch-tenant', 'Acme'], /--dispatch-tenant must be/],
      [
        ['--dispatch', '--targets', good, '--dispatch-poll-ms', '0'],
        /--dispatch-poll-ms must be an integer from 1 to 3600000, not "0"/,
      ],
      [['--dispatch-poll-ms', '500'], /--dispatch-poll-ms needs --dispatch/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(['serve', '--port', '0', '--store', store, ...args]);
      expect({ code: run.code, args }).toEqual({ code: 2, args });
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toContain('Usage: fencegate serve');
      expect(run.stdout).not.toContain('listening');
    }
    const help = await runCli(['serve', '--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--dispatch ',
      '--targets FILE',
      '--dispatch-tenant T',
      '--dispatch-poll-ms',
    ]) {
      expect(help.stdout).toContain(flag);
    }
  });
});
