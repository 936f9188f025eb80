/**
 * Node effects across two processes sharing one SQLite file, under each durability mode, delivered
 * by the real dispatcher to a real HTTP target: a worker killed (SIGKILL) after its node staged an
 * effect and before the node's writes were stored is resumed by another process, which delivers
 * the effect once; under `async`, a worker frozen (SIGSTOP) after staging, whose thread is taken
 * meanwhile, wakes and stages once more: its writes are refused and nothing it staged is delivered
 * (the successor's rerun of the same task delivers the same key once).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { EffectTarget, buildEffectGraph, type StagedKeys } from './langgraph-effects-fixture.js';

const CHILD = new URL('./langgraph-node-effects-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
const DURABILITIES = ['sync', 'async', 'exit'] as const;

interface Child {
  process: ChildProcessWithoutNullStreams;
  line(): Promise<string>;
}

function startChild(options: Record<string, unknown>): Child {
  const child = spawn(process.execPath, [childBundle!.bundleOf(CHILD), JSON.stringify(options)]);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    process: child,
    line: async () => {
      const next = await lines.next();
      if (next.done === true) throw new Error('the child ended without a line');
      return String(next.value);
    },
  };
}

describe('node effects across two processes', () => {
  let dir: string;
  let store: string;
  let gate: Fencegate;
  let target: EffectTarget;
  let saver: FencedCheckpointSaver;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fencegate-node-effects-'));
    store = `sqlite:${join(dir, 'threads.db')}`;
    gate = await Fencegate.open({ store });
    target = await EffectTarget.start(gate);
    saver = new FencedCheckpointSaver({ gate, holder: 'successor' });
  });
  afterEach(async () => {
    await target.stop();
    await saver.close();
    expect((await gate.verify()).violations).toEqual([]);
    await gate.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The thread taken from the child and run on to its end here; the keys `act` staged. */
  async function resume(thread: string, durability: (typeof DURABILITIES)[number]) {
    const staged: StagedKeys = [];
    const owner = await saver.claimWriteOwnership(thread);
    // Under `exit` the child stored nothing: the thread starts afresh.
    const input = durability === 'exit' ? { steps: ['input'] } : null;
    await buildEffectGraph(owner, 'successor', staged).invoke(input, {
      configurable: { thread_id: thread },
      durability,
    });
    return staged;
  }

  /** Waits until the checkpoint `act` ran from is stored (under `exit` nothing is). */
  async function actStarted(thread: string, durability: (typeof DURABILITIES)[number]) {
    if (durability === 'exit') return;
    await expect
      .poll(
        async () =>
          (await saver.getTuple({ configurable: { thread_id: thread } }))?.checkpoint
            .channel_values,
      )
      .toMatchObject({ steps: ['input', 'plan by child'] });
  }

  async function deliveredOnce(effectKey: string): Promise<void> {
    await expect.poll(async () => (await gate.getIntent(effectKey))?.status).toBe('delivered');
    expect(target.deliveries(effectKey)).toBe(1);
  }

  for (const durability of DURABILITIES) {
    it(`a worker killed after staging, before its writes, is resumed by another process, which delivers the effect once (durability ${durability})`, async () => {
      const thread = `killed-${durability}`;
      const child = startChild({ store, thread, durability });
      const [, killedKey] = (await child.line()).split(' ');
      await actStarted(thread, durability);
      child.process.kill('SIGKILL');
      await new Promise((resolve) => child.process.once('exit', resolve));
      expect(await gate.getIntent(killedKey!)).toBeNull();

      const [resumedKey] = await resume(thread, durability);
      // Resumed from the checkpoint `act` ran from, the task has the id it had: the same key.
      if (durability !== 'exit') expect(resumedKey).toBe(killedKey);
      await deliveredOnce(resumedKey!);
      expect(target.receiver.requests).toHaveLength(1);
    });
  }

  // Under `async` a superseded run executes one more node; the in-process tests cover every mode.
  for (const durability of ['async'] as const) {
    it(`a worker frozen after staging, its thread taken meanwhile, has nothing it staged delivered (durability ${durability})`, async () => {
      const thread = `frozen-${durability}`;
      const child = startChild({ store, thread, durability });
      const [, frozenKey] = (await child.line()).split(' ');
      await actStarted(thread, durability);
      child.process.kill('SIGSTOP');
      const [resumedKey] = await resume(thread, durability);
      await deliveredOnce(resumedKey!);

      child.process.kill('SIGCONT');
      child.process.stdin.write('go\n');
      expect(JSON.parse(await child.line())).toEqual({ error: 'stale_fence' });
      await new Promise((resolve) => child.process.once('exit', resolve));
      // The thawed run staged `late` and its writes were refused: only the successor's key exists.
      const keys = (await gate.listIntents({ scope: saver.scopeFor(thread) })).items.map(
        (intent) => intent.effectKey,
      );
      expect(keys).toEqual([resumedKey]);
      expect(resumedKey).toBe(frozenKey);
      expect(target.receiver.requests).toHaveLength(1);
    });
  }
});
