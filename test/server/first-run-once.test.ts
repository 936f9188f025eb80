/**
 * First-run tokens are made once per store, ever: revoking every token and starting again makes
 * none (a store left without tokens is managed with `fencegate token create`), and a store that
 * got its tokens otherwise never makes them either. On every store.
 */
import { describe, expect, it } from 'vitest';
import { createFirstRunTokens } from '../../src/server/start-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

describe.each(AREA_STORES)('first-run tokens on $name', (kind) => {
  const stores = storesFor(kind, 'first-run-once');

  it('are made once: after every token is revoked, a restart makes none', async () => {
    const { store, url } = await stores.open();
    try {
      const first = await createFirstRunTokens(store);
      expect(first).not.toBeNull();
      expect(await store.deleteToken(first!.adminTokenId)).toBe(true);
      expect(await store.deleteToken(first!.operatorTokenId)).toBe(true);
      expect(await store.countTokens()).toBe(0);

      const restarted = await stores.reopen(url);
      try {
        expect(await createFirstRunTokens(restarted)).toBeNull();
        expect(await restarted.countTokens()).toBe(0);
      } finally {
        await restarted.close();
      }
    } finally {
      await store.close();
    }
  });

  it('are never made on a store that had tokens, even once they are all revoked', async () => {
    const { store } = await stores.open();
    try {
      const issued = await issueToken(store, { tenant: 'acme', role: 'operator' });
      expect(await createFirstRunTokens(store)).toBeNull();
      expect(await store.deleteToken(issued.record.id)).toBe(true);
      expect(await createFirstRunTokens(store)).toBeNull();
      expect(await store.countTokens()).toBe(0);
    } finally {
      await store.close();
    }
  });
});
