/**
 * The verified checkpoint a store keeps for audit retention: read back whole (a large one too,
 * which etcd keeps in chunks), and never replaced by one that reaches less far. On every store.
 */
import { describe, expect, it } from 'vitest';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

describe.each(AREA_STORES)('the kept verified checkpoint on $name', (kind) => {
  const stores = storesFor(kind, 'kept-checkpoint');

  it('reads back what was kept, a large one whole, and keeps the one that reaches furthest', async () => {
    const { store } = await stores.open();
    try {
      expect(await store.loadVerifiedCheckpoint!()).toBeNull();
      const large = JSON.stringify({ lastSeq: 10, pad: 'x'.repeat(1_300_000) });
      await store.saveVerifiedCheckpoint!(10, large);
      expect(await store.loadVerifiedCheckpoint!()).toBe(large);
      await store.saveVerifiedCheckpoint!(5, '{"lastSeq":5}');
      expect(await store.loadVerifiedCheckpoint!()).toBe(large);
      await store.saveVerifiedCheckpoint!(20, '{"lastSeq":20}');
      expect(await store.loadVerifiedCheckpoint!()).toBe('{"lastSeq":20}');
    } finally {
      await store.close();
    }
  });
});
