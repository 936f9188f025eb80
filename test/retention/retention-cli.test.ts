/**
 * `fencegate retention` on a SQLite file, in process: verify writes a checkpoint, retention
 * exports and prunes below it and keeps outcomes younger than the window, verify continues from the checkpoint;
 * wrong calls are usage errors that change nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { tempDir } from '../helpers/temp-dir.js';
import { cli } from './in-process-cli.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

it('exports and prunes verified audit entries and old outcomes; verify continues', async () => {
  const store = `sqlite:${join(dir.path, 'store.db')}`;
  const checkpoint = join(dir.path, 'verify.json');
  const exported = join(dir.path, 'audit.jsonl');
  const gate = await Fencegate.open({ store });
  const grant = await gate.acquire({ scope: 's', holder: 'w', ttlMs: 60_000 });
  await gate.commit({ scope: 's', fence: grant.fence, operationId: 'op-1', writes: [] });
  await gate.close();

  expect((await cli('retention', '--store', store)).code).toBe(2);
  expect((await cli('retention', '--store', store, '--keep-outcomes', '7 days')).code).toBe(2);
  expect((await cli('retention', '--store', store, '--export', exported)).code).toBe(2);
  expect(existsSync(exported)).toBe(false);

  expect((await cli('verify', '--store', store, '--checkpoint', checkpoint)).code).toBe(0);
  const pruned = await cli(
    'retention',
    '--store',
    store,
    '--keep-outcomes',
    '1h',
    '--checkpoint',
    checkpoint,
    '--export',
    exported,
  );
  expect(pruned).toMatchObject({ code: 0 });
  expect(pruned.stdout).toMatch(
    /0 stored outcomes deleted, 1 audit entries deleted \(2 exported\)/,
  );
  expect(readFileSync(exported, 'utf8').trim().split('\n')).toHaveLength(2);
  // From the start, the pruned history cannot be proven: the caller is told to use the checkpoint.
  const fromStart = await cli('verify', '--store', store);
  expect(fromStart.code).toBe(2);
  expect(fromStart.stderr).toMatch(/pruned.*--checkpoint/);
  expect((await cli('verify', '--store', store, '--checkpoint', checkpoint)).code).toBe(0);
});

it('deletes rollouts finished longer ago than --keep-rollouts, 30 days unless told', async () => {
  const store = `sqlite:${join(dir.path, 'rollouts.db')}`;
  const gate = await Fencegate.open({ store });
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
  await gate.acquire({ scope: 'wf-1', holder: 'w', ttlMs: 60_000, policyVersion: 'v7' });
  await gate.rollouts.start({
    rolloutId: 'ramp',
    fromPolicy: 'v7',
    toPolicy: 'v8',
    prefix: 'wf-',
    steps: [100],
  });
  await gate.close();

  expect((await cli('retention', '--store', store, '--keep-rollouts', '3 weeks')).code).toBe(2);
  const kept = await cli('retention', '--store', store, '--keep-outcomes', '7d');
  expect(kept).toMatchObject({ code: 0 });
  expect(kept.stdout).toMatch(/; 0 finished rollouts deleted/);
  const pruned = await cli('retention', '--store', store, '--keep-rollouts', '0ms');
  expect(pruned).toMatchObject({ code: 0 });
  expect(pruned.stdout).toMatch(/; 1 finished rollouts deleted/);
  const after = await Fencegate.open({ store });
  expect(await after.rollouts.get('ramp')).toBeNull();
  await after.close();
});
