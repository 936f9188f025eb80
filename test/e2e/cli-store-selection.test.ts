/**
 * Which store a CLI command acts on: `--store`, else FENCEGATE_STORE, else ./fencegate.db. A
 * command other than `serve` never creates a store file by surprise: a SQLite path that does not
 * exist is refused, naming it, unless `--create-store` says to create it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: { cleanup: () => void }[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) dir.cleanup();
});

function missingStore(): { path: string; url: string } {
  const dir = tempDir('fencegate-cli-store-');
  dirs.push(dir);
  const path = join(dir.path, 'fencegate.db');
  return { path, url: `sqlite:${path}` };
}

const cli = inProcessCli;

const CREATE = ['token', 'create', '--tenant', 'acme', '--role', 'worker'];

describe('the store of a CLI command', () => {
  it('is not created by a command that would act on a missing SQLite file: it names the path and the remedy, exit 2', async () => {
    const store = missingStore();
    const commands = [
      CREATE,
      ['token', 'list'],
      ['token', 'revoke', 'tok_x'],
      ['retention', '--keep-outcomes', '7d'],
      ['verify'],
    ];
    for (const args of commands) {
      for (const [argv, env] of [
        [[...args, '--store', store.url], {}],
        [args, { FENCEGATE_STORE: store.url }],
      ] as const) {
        const run = await cli([...argv], env);
        expect({ argv, code: run.code, stdout: run.stdout }).toEqual({ argv, code: 2, stdout: '' });
        expect(run.stderr).toContain(`no store at ${store.path}`);
        expect(run.stderr).toContain('--store URL or FENCEGATE_STORE');
        expect(existsSync(store.path)).toBe(false);
      }
    }
    expect((await cli(CREATE, { FENCEGATE_STORE: store.url })).stderr).toContain('--create-store');
  });

  it('is created with --create-store, and then found through FENCEGATE_STORE', async () => {
    const store = missingStore();
    const created = await cli([...CREATE, '--store', store.url, '--create-store']);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^fg_/);
    expect(existsSync(store.path)).toBe(true);
    const listed = await cli(['token', 'list'], { FENCEGATE_STORE: store.url });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/tok_\S+\s+acme\s+worker/);
  });
});
