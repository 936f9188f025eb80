/**
 * Tokens on etcd: of several clients bootstrapping one empty store at once exactly one stores its
 * tokens, and the listing shows them oldest first, per tenant when asked.
 */
import { afterAll, expect, it } from 'vitest';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { ManualClock } from '../../src/testing/index.js';
import { etcdTestUrl, skipWithoutEtcd, uniquePrefix } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

const url = noEtcd ? '' : `${etcdTestUrl('single')}?prefix=${uniquePrefix('tokens')}`;
const clock = new ManualClock();
const stores: EtcdStore[] = [];

afterAll(async () => {
  for (const store of stores) await store.close();
});

const token = (id: string, tenant: string) => ({
  id,
  tenant,
  role: 'operator' as const,
  label: null,
  hash: `hash-${id}`,
});

it.skipIf(noEtcd)(
  'one bootstrap of an empty store wins; the listing is oldest first and per tenant',
  async () => {
    for (let i = 0; i < 4; i++) stores.push(await EtcdStore.open({ url, clock }));
    const answers = await Promise.all(
      stores.map((store, i) => store.createTokensIfNone([token(`boot-${i}`, 'default')])),
    );
    const winners = answers.filter((answer) => answer !== null);
    expect(winners).toHaveLength(1);
    const [store] = stores as [EtcdStore];
    expect(await store.listTokens()).toEqual(winners[0]);
    expect(await store.createTokensIfNone([token('late', 'default')])).toBeNull();

    clock.advance(1000);
    const later = await store.createToken(token('shop-1', 'shop'));
    expect(await store.listTokens()).toEqual([...(winners[0] ?? []), later]);
    expect(await store.listTokens('shop')).toEqual([later]);
    expect(await store.countTokens()).toBe(2);
  },
);
