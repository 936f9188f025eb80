import { describe, expect, it } from 'vitest';
import { ManualClock, NO_PAUSE, PausePointError, PausePoints } from '../../src/testing/index.js';

describe('PausePoints', () => {
  it('holds a worker at a point until the test releases it', async () => {
    const points = new PausePoints();
    const log: string[] = [];
    const worker = (async () => {
      log.push('read');
      await points.reach('after-read');
      log.push('commit');
      return 'done';
    })();
    await points.waitUntilReached('after-read', worker);
    expect(points.hasReached('after-read')).toBe(true);
    log.push('competitor');
    points.release('after-read');
    expect(await worker).toBe('done');
    expect(log).toEqual(['read', 'competitor', 'commit']);
  });

  it('lets a worker pass a point released before it arrives', async () => {
    const points = new PausePoints();
    points.release('p');
    await points.reach('p');
    expect(points.reachedInOrder()).toEqual(['p']);
  });

  it('fails the wait when the worker finishes or fails without reaching the point', async () => {
    const points = new PausePoints();
    await expect(points.waitUntilReached('never', Promise.resolve('finished'))).rejects.toThrow(
      'finished without reaching pause point never',
    );
    await expect(
      points.waitUntilReached('never', Promise.reject(new Error('crashed'))),
    ).rejects.toBeInstanceOf(PausePointError);
  });

  it('refuses a point reached or released twice', async () => {
    const points = new PausePoints();
    points.release('p');
    await points.reach('p');
    expect(() => points.reach('p')).toThrow(PausePointError);
    expect(() => points.release('p')).toThrow(PausePointError);
  });

  it('records the order workers reached their points and releases all for cleanup', async () => {
    const points = new PausePoints();
    const a = points.reach('a');
    const b = points.reach('b');
    expect(points.reachedInOrder()).toEqual(['a', 'b']);
    points.releaseAll();
    await Promise.all([a, b]);
  });

  it('has a no-op stand-in for code paths without a test', async () => {
    await NO_PAUSE.reach('anything');
  });
});

describe('ManualClock', () => {
  it('moves only forward and only when told', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    expect(clock.advance(500)).toBe(1_500);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    clock.set(10_000);
    expect(clock.now()).toBe(10_000);
  });
});
