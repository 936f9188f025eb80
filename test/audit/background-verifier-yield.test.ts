/**
 * The server's background verifier reads the audit entries appended since its last run, which
 * under load are tens of thousands. On an embedded store each page is read synchronously, so the
 * run must give the event loop back between pages: otherwise requests wait for the whole backlog.
 */
import { expect, it } from 'vitest';
import { BackgroundVerifier } from '../../src/audit/background-verifier.js';
import { Fencegate } from '../../src/gate.js';
import { memoryStore } from '../helpers/memory-store.js';

it('gives the event loop back between the pages of one run', async () => {
  const store = memoryStore();
  const gate = await Fencegate.open({ store });
  try {
    const { fence } = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
    for (let i = 0; i < 30; i++) {
      await gate.commit({
        scope: 's',
        fence,
        operationId: `op-${i}`,
        writes: [{ name: `r-${i}`, expectRevision: 0, value: i }],
      });
    }
    const verifier = new BackgroundVerifier(store, { pageSize: 5 });
    const order: string[] = [];
    const run = verifier.runOnce().then(() => order.push('run finished'));
    setImmediate(() => order.push('event loop turned'));
    await run;
    expect(order).toEqual(['event loop turned', 'run finished']);
    expect(verifier.checked).toBe(31);
    expect(verifier.violations).toBe(0);
  } finally {
    await gate.close();
  }
});
