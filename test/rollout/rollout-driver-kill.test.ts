/**
 * A rollout driver SIGKILLed mid-hold in its own process on a SQLite file: the next driver takes
 * the rollout over once the killed one's lease has run out, and ends the hold from the store
 * (store time, the step's completedAt): one advance, by the second driver. The kill point is
 * chosen by watching the store (the lease is held, the step moved), not by a timer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { Fencegate } from '../../src/gate.js';

const CHILD = new URL('./rollout-driver-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
const dir = mkdtempSync(join(tmpdir(), 'fg-driver-'));
const url = `sqlite:${join(dir, 'store.db')}`;

function driverProcess(holder: string): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, [childBundle!.bundleOf(CHILD), url, holder], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  child.stdout.on('data', (chunk: Buffer) =>
    lines.push(...chunk.toString().split('\n').filter(Boolean)),
  );
  return { child, lines };
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('a rollout driver killed mid-hold', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is replaced after its lease by the next driver, which ends the hold and advances once', async () => {
    const gate = await Fencegate.open({ store: url });
    await gate.registerPolicy({ version: 'v7' });
    await gate.registerPolicy({ version: 'v8' });
    for (let i = 0; i < 20; i++) {
      const grant = await gate.acquire({
        scope: `wf-${i}`,
        holder: 'v7',
        ttlMs: 60_000,
        policyVersion: 'v7',
      });
      await gate.release({ scope: `wf-${i}`, holder: 'v7', fence: grant.fence });
    }
    // The first driver is up before the rollout starts, so its first looks fall in the hold.
    const first = driverProcess('first');
    await until(() => Promise.resolve(first.lines.includes('ready')));
    await gate.rollouts.start({
      rolloutId: 'r',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      prefix: 'wf-',
      steps: [30, 100],
      holdSeconds: 4,
    });
    await until(
      async () => (await gate.store.readRolloutDriver('default', 'r'))?.holder === 'first',
    );
    expect((await gate.rollouts.get('r'))?.step).toBe(1);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    // The first driver may have helped move the step while the start was still moving it (its
    // moves and the start's are one cutover's chunks); it must not have ended the hold.
    const firstActions = first.lines
      .filter((line) => line !== 'ready')
      .map((line) => (JSON.parse(line) as { action: string }).action);
    expect(firstActions.filter((action) => action !== 'resume_moves')).toEqual([]);

    const second = driverProcess('second');
    try {
      await until(async () => (await gate.rollouts.get('r'))?.status === 'completed');
      expect(await gate.store.readRolloutDriver('default', 'r')).toMatchObject({
        holder: 'second',
        fence: 2,
      });
      const actions = second.lines
        .filter((line) => line !== 'ready')
        .map((line) => JSON.parse(line) as { action: string });
      expect(actions.map((action) => action.action)).toEqual(['advance']);
      const step = await gate.store.getCutover('default', 'r/step-1');
      const rollout = await gate.rollouts.get('r');
      // The hold ran its length in store time, from the step's end.
      expect(rollout!.updatedAt - step!.completedAt!).toBeGreaterThanOrEqual(4000);
    } finally {
      second.child.kill('SIGKILL');
      await once(second.child, 'exit');
      await gate.close();
    }
  }, 60_000);
});
