/**
 * Targets are the operator's, and a target's `tenants` list says whose intents may use it. With a
 * real receiver: on the in-memory reference store, tenant mallory's intent for acme's target is
 * never sent and ends failed with lastError target_not_allowed (audited), while acme's own intent
 * is delivered; and a server dispatching without a tenant list (started from a store URL, so on a
 * store of the test list) delivers the intents of every tenant, including one that appeared after
 * it started.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseTargets, startDispatcherFromTargets } from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';
import { startServer } from '../../src/server/start-server.js';
import { memoryStore } from '../helpers/memory-store.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { commitIntents, waitFor } from './helpers.js';
import { Receiver } from './receiver.js';

const dir = tempDir('fencegate-target-tenants-');
afterAll(() => dir.cleanup());

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiverAndTargets(): Promise<{ receiver: Receiver; file: string }> {
  const receiver = await Receiver.start();
  cleanups.push(() => receiver.close());
  const file = join(dir.path, `targets-${receiver.port}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      targets: {
        'acme-crm': {
          type: 'webhook',
          url: receiver.url('/acme'),
          headers: { 'x-api-key': 'acme-secret' },
          tenants: ['acme'],
        },
        shared: { type: 'webhook', url: receiver.url('/shared') },
      },
    }),
  );
  return { receiver, file };
}

describe('the targets file', () => {
  it('takes an optional tenants list of tenant names', () => {
    const config = parseTargets({
      targets: { a: { type: 'webhook', url: 'http://127.0.0.1:1/', tenants: ['acme', 'globex'] } },
    });
    expect(config.targets.a?.tenants).toEqual(['acme', 'globex']);
    for (const tenants of [[], ['Acme'], 'acme', ['acme', 'acme'], [1]]) {
      expect(() =>
        parseTargets(
          { targets: { a: { type: 'webhook', url: 'http://127.0.0.1:1/', tenants } } },
          'targets.json',
        ),
      ).toThrow(/targets\.json: targets\.a\.tenants/);
    }
  });

  it('a library dispatcher without its tenant refuses a targets file with tenants lists', async () => {
    const { file } = await receiverAndTargets();
    // Shaped like the HTTP client: nothing says which tenant it acts for. The file is refused
    // before any claim, so nothing stands behind the calls.
    const unused = () => Promise.reject(new Error('the dispatcher must not start'));
    const api = { claimIntents: unused, completeIntent: unused };
    await expect(startDispatcherFromTargets({ api, targetsFile: file })).rejects.toThrow(
      /tenants list.*needs the tenant/,
    );
  });
});

describe('tenants of a target', () => {
  it("mallory's intent for acme's target is never sent and ends failed target_not_allowed", async () => {
    const { receiver, file } = await receiverAndTargets();
    const store = memoryStore();
    const gate = await Fencegate.open({ store });
    cleanups.push(() => gate.close());
    const mallory = gate.forTenant('mallory');
    const acme = gate.forTenant('acme');
    await commitIntents(mallory, 'wf-steal', [
      { effectKey: 'steal-1', target: 'acme-crm', payload: { steal: true } },
      { effectKey: 'own-1', target: 'shared', payload: {} },
    ]);
    await commitIntents(acme, 'wf-own', [{ effectKey: 'acme-1', target: 'acme-crm', payload: {} }]);

    const settled = async (api: Fencegate, key: string) =>
      ['delivered', 'failed'].includes((await api.getIntent(key))?.status ?? '');
    for (const [tenant, api, keys] of [
      ['mallory', mallory, ['steal-1', 'own-1']],
      ['acme', acme, ['acme-1']],
    ] as const) {
      const running = await startDispatcherFromTargets({ api, tenant, targetsFile: file });
      for (const key of keys) await waitFor(() => settled(api, key), `${key} settled`);
      await running.stop();
    }

    const stolen = await mallory.getIntent('steal-1');
    expect(stolen).toMatchObject({ status: 'failed', lastError: 'target_not_allowed' });
    expect(await mallory.getIntent('own-1')).toMatchObject({ status: 'delivered' });
    expect(await acme.getIntent('acme-1')).toMatchObject({ status: 'delivered' });
    expect(receiver.requests.map((r) => [r.path, r.key]).sort()).toEqual([
      ['/acme', 'acme-1'],
      ['/shared', 'own-1'],
    ]);
    expect(receiver.requests.find((r) => r.key === 'acme-1')?.headers['x-api-key']).toBe(
      'acme-secret',
    );
    const audit = await store.readAudit('mallory', { limit: 100 });
    expect(
      audit.items
        .filter((entry) => entry.effectKey === 'steal-1')
        .map((e) => [e.outcome, e.reason]),
    ).toEqual([
      ['pending', null],
      ['claimed', null],
      ['failed', 'target_not_allowed'],
    ]);
  });
});

// `fencegate serve` opens its store from a URL: a store of the list.
describe.each(ONE_STORE)('on $name', (kind) => {
  const stores = storesFor(kind, 'dispatch_target_tenants');

  it('serve --dispatch without a tenant list delivers every tenant, also ones created later', async () => {
    const { receiver, file } = await receiverAndTargets();
    const { url } = await stores.open();
    const running = await startServer({
      store: url,
      host: '127.0.0.1',
      port: 0,
      adminToken: 'admin-token-for-target-tenants',
      dispatch: { targetsFile: file, discoverIntervalMs: 50 },
    });
    cleanups.push(() => running.close());
    const gate = await Fencegate.open({ store: running.store });
    // Tenants that did not exist when the server started.
    await commitIntents(gate.forTenant('acme'), 'wf-a', [
      { effectKey: 'later-acme', target: 'acme-crm', payload: {} },
    ]);
    await commitIntents(gate.forTenant('globex'), 'wf-g', [
      { effectKey: 'later-globex', target: 'shared', payload: {} },
      { effectKey: 'globex-steal', target: 'acme-crm', payload: {} },
    ]);
    const settled = async (tenant: string, key: string) =>
      ['delivered', 'failed'].includes((await gate.forTenant(tenant).getIntent(key))?.status ?? '');
    await waitFor(async () => await settled('acme', 'later-acme'), 'acme delivered');
    await waitFor(async () => await settled('globex', 'later-globex'), 'globex delivered');
    await waitFor(async () => await settled('globex', 'globex-steal'), 'globex refused');
    expect(await gate.forTenant('acme').getIntent('later-acme')).toMatchObject({
      status: 'delivered',
    });
    expect(await gate.forTenant('globex').getIntent('globex-steal')).toMatchObject({
      status: 'failed',
      lastError: 'target_not_allowed',
    });
    expect(receiver.requests.map((r) => r.key).sort()).toEqual(['later-acme', 'later-globex']);
  });
});
