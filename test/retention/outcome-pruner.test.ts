/** The server's outcome pruner: a pass at start deletes outcomes older than the window. */
import { expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { startOutcomePruner } from '../../src/retention/outcome-pruner.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { memoryStore } from '../helpers/memory-store.js';

const HOUR = 3_600_000;

it('deletes outcomes older than the window at start, and stops cleanly', async () => {
  const clock = new ManualClock();
  const store = memoryStore(clock);
  const gate = await Fencegate.open({ store });
  try {
    const { fence } = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 10 * HOUR });
    await gate.commit({ scope: 's', fence, operationId: 'old', writes: [] });
    clock.advance(2 * HOUR);
    await gate.commit({ scope: 's', fence, operationId: 'new', writes: [] });
    const passes: unknown[] = [];
    const passed = new Promise<void>((resolve) => {
      const stop = startOutcomePruner(store, {
        keepOutcomesMs: HOUR,
        onPass: (result) => {
          passes.push(result);
          void stop().then(resolve);
        },
      });
    });
    await passed;
    expect(passes).toEqual([{ deleted: 1 }]);
    expect(await gate.getOperation('old')).toBeNull();
    expect(await gate.getOperation('new')).not.toBeNull();
  } finally {
    await gate.close();
  }
});
