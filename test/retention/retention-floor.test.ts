/**
 * Retention windows have a floor of one hour: a shorter window would delete the outcome of a
 * commit whose client is still retrying it, and the retry would apply as a new operation. The
 * library, `fencegate retention` and `fencegate serve --keep-outcomes` refuse it with what to
 * write, and delete nothing.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { applyRetention } from '../../src/retention/retention.js';
import { startOutcomePruner } from '../../src/retention/outcome-pruner.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { memoryStore } from '../helpers/memory-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { cli } from './in-process-cli.js';

const HOUR = 3_600_000;
let dir = tempDir();
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

it('the library refuses a window under one hour and deletes nothing', async () => {
  const clock = new ManualClock();
  const store = memoryStore(clock);
  const gate = await Fencegate.open({ store });
  try {
    const { fence } = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 10 * HOUR });
    await gate.commit({ scope: 's', fence, operationId: 'op-1', writes: [] });
    clock.advance(2 * HOUR);
    for (const ms of [0, 1, HOUR - 1]) {
      await expect(applyRetention(store, { outcomeRetentionMs: ms })).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/at least 1h/) as unknown,
      });
      expect(() => startOutcomePruner(store, { keepOutcomesMs: ms })).toThrow(/at least 1h/);
    }
    expect(await gate.getOperation('op-1')).not.toBeNull();
    expect(await applyRetention(store, { outcomeRetentionMs: HOUR })).toMatchObject({
      outcomesDeleted: 1,
    });
  } finally {
    await gate.close();
  }
});

it('fencegate retention and serve refuse --keep-outcomes under one hour', async () => {
  const store = `sqlite:${join(dir.path, 'store.db')}`;
  for (const window of ['1ms', '59m', '3599s']) {
    const retention = await cli('retention', '--store', store, '--keep-outcomes', window);
    expect(retention.code).toBe(2);
    expect(retention.stderr).toMatch(/at least 1h/);
    const serve = await cli('serve', '--store', store, '--port', '0', '--keep-outcomes', window);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toMatch(/--keep-outcomes: .*at least 1h/);
  }
  expect(
    (await cli('retention', '--store', store, '--create-store', '--keep-outcomes', '60m')).code,
  ).toBe(0);
});
