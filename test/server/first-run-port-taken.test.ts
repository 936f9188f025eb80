/**
 * First-run tokens are shown once, so they are made only once the server listens: a start whose
 * port is taken fails without making them, and the next start that listens makes them and gets
 * them to show.
 */
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/start-server.js';
import { takenPort } from '../helpers/free-port.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';

// startServer opens its store from a URL, and the second start must find what the first left
// there: a store of the list, not the in-memory one.
describe.each(ONE_STORE)('first-run tokens on $name', (kind) => {
  const stores = storesFor(kind, 'first-run-port');

  it('are not made by a start whose port is taken; the next start makes them', async () => {
    const url = stores.freshUrl();
    const taken = await takenPort();
    try {
      await expect(
        startServer({ store: url, host: '127.0.0.1', port: taken.port }),
      ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await taken.close();
    }

    const running = await startServer({ store: url, host: '127.0.0.1', port: 0 });
    try {
      expect(running.firstRun).toMatchObject({ operatorTenant: 'dev' });
      expect(await running.store.countTokens()).toBe(2);
    } finally {
      await running.close();
    }
  });
});
