/**
 * Two handles on one store (two processes, in effect): a handle that never saw a row plans on a
 * guess where its store guesses (PostgreSQL and etcd cache rows and compare them when they apply).
 * Some plans cannot even be made on a wrong guess: a cutover chunk refuses to plan without its
 * cutover row. The second handle must then read what it guessed and plan again, never answer an
 * internal error.
 */
import { describe, expect, it } from 'vitest';
import { STORES, storesFor } from '../helpers/stores.js';

for (const kind of STORES) {
  describe(`a second handle on one store: ${kind.name}`, () => {
    const stores = storesFor(kind, 'second_handle');

    it('moves a cutover the first handle started, whose rows it never read', async () => {
      const { store: first, url } = await stores.open();
      const second = await stores.reopen(url);
      try {
        const scopes = ['wf-1/memory', 'wf-2/memory', 'wf-3/memory'];
        await first.registerPolicy('default', { version: 'v8' }, null);
        for (const scope of scopes) {
          await first.acquire('default', { scope, holder: 'worker', ttlMs: 60_000 });
        }
        await first.startCutover('default', {
          cutoverId: 'second-1',
          toPolicy: 'v8',
          holder: 'controller',
          scopes,
        });
        expect(await second.moveCutoverChunk('default', 'second-1')).toBe(3);
        const cutover = await second.getCutover('default', 'second-1');
        expect(cutover?.fences.map((f) => f.scope)).toEqual(scopes);
        for (const scope of scopes) {
          expect((await first.getScope('default', scope))?.policyVersion).toBe('v8');
        }
      } finally {
        await second.close();
        await first.close();
      }
    });
  });
}
