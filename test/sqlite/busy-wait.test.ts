/**
 * While another process holds the SQLite file's write lock, a write waits for it from the event
 * loop: timers, renewals and requests of this process go on, the write proceeds once the lock is
 * free, and past the busy timeout it is answered store_unavailable with nothing changed.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startPeer } from './peer-process.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

const TICK_MS = 10;
/** How long the other process holds the lock, and the busy timeout of the test that gives up. */
const HOLD_MS = 2_000;

/** Another process takes the write lock and holds it until release() is called. */
async function holdWriteLock(path: string): Promise<{ release(): Promise<void> }> {
  const peer = startPeer(path);
  await peer.send('lock');
  return { release: () => peer.stop() };
}

/** The longest gap between ticks of a TICK_MS interval while `work` runs. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ stall: number; result: T }> {
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, TICK_MS);
  try {
    const result = await work();
    stall = Math.max(stall, performance.now() - last);
    return { stall, result };
  } finally {
    clearInterval(timer);
  }
}

async function openGate(name: string, options: { groupCommit: boolean; busyTimeoutMs: number }) {
  const path = join(dir.path, `${name}.db`);
  const gate = await Fencegate.open({ store: SqliteStore.open({ path, ...options }) });
  const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
  return { gate, grant, path };
}

describe.each([false, true])(
  'a SQLite write behind another process (group commit %s)',
  (groupCommit) => {
    it('keeps the event loop turning while it waits, then commits once the lock is free', async () => {
      const { gate, grant, path } = await openGate(`wait-${groupCommit}`, {
        groupCommit,
        busyTimeoutMs: 10_000,
      });
      const lock = await holdWriteLock(path);
      const releasing = new Promise<void>((resolve) => setTimeout(resolve, HOLD_MS)).then(() =>
        lock.release(),
      );
      const { stall, result } = await longestStall(() =>
        gate.commit({
          scope: 's',
          fence: grant.fence,
          operationId: 'behind-the-lock',
          writes: [{ name: 'r', expectRevision: 0, value: 1 }],
        }),
      );
      await releasing;
      expect(result.outcome).toBe('committed');
      // A synchronous busy wait would stall the loop for the whole hold; a loaded machine may
      // leave the process unscheduled for a while, never for most of the hold.
      expect(stall).toBeLessThan(HOLD_MS / 2);
      await gate.close();
    });

    it('answers store_unavailable past the busy timeout, with nothing changed, without freezing', async () => {
      const { gate, grant, path } = await openGate(`timeout-${groupCommit}`, {
        groupCommit,
        busyTimeoutMs: HOLD_MS,
      });
      const lock = await holdWriteLock(path);
      try {
        const started = performance.now();
        const { stall, result } = await longestStall(() =>
          gate
            .commit({
              scope: 's',
              fence: grant.fence,
              operationId: 'gives-up',
              writes: [{ name: 'r', expectRevision: 0, value: 1 }],
            })
            .then(
              () => 'committed',
              (error: unknown) => {
                expect((error as Error).message).toContain('write lock');
                return (error as { code?: string }).code;
              },
            ),
        );
        expect(result).toBe('store_unavailable');
        expect(performance.now() - started).toBeGreaterThanOrEqual(HOLD_MS);
        expect(stall).toBeLessThan(HOLD_MS / 2);
      } finally {
        await lock.release();
      }
      expect(await gate.getOperation('gives-up')).toBeNull();
      expect((await gate.getRecord('s', 'r')).exists).toBe(false);
      await gate.close();
    });
  },
);
