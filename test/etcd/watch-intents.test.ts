/**
 * watchIntents on etcd: a commit with intents through another client on the same key prefix
 * announces its tenant; claiming those intents announces nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { etcdTestUrl, skipWithoutEtcd, uniquePrefix } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

const url = noEtcd ? '' : `${etcdTestUrl('single')}?prefix=${uniquePrefix('watch')}`;
let watching: EtcdStore;
let writer: Fencegate;

beforeAll(async () => {
  watching = await EtcdStore.open({ url });
  writer = await Fencegate.open({ store: await EtcdStore.open({ url }) });
});

afterAll(async () => {
  await writer.close();
  await watching.close();
});

it.skipIf(noEtcd)(
  'announces the tenant of committed intents, made by another client, and not their claims',
  async () => {
    const heard: string[] = [];
    const stop = await watching.watchIntents((tenant) => heard.push(tenant));
    const gate = writer.forTenant('shop');
    const { fence } = await gate.acquire({ scope: 'orders/1', holder: 'w', ttlMs: 60_000 });
    await gate.commit({
      scope: 'orders/1',
      fence,
      operationId: 'op-1',
      intents: [
        { effectKey: 'mail-1', target: 'mail', payload: {} },
        { effectKey: 'mail-2', target: 'mail', payload: {} },
      ],
    });
    await expect.poll(() => heard.length).toBe(2);
    expect(heard).toEqual(['shop', 'shop']);
    expect(await gate.claimIntents({ dispatcher: 'd', limit: 10, ttlMs: 30_000 })).toHaveLength(2);
    await writer.forTenant('other').acquire({ scope: 'x', holder: 'w', ttlMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard).toEqual(['shop', 'shop']);
    await stop();
  },
);
