/**
 * Where `fencegate serve` shows its first-run tokens (the built CLI in a child process; run
 * `npm run build` first): a log stream (stdout not a terminal) gets their ids and no secret, a
 * file named by --first-run-tokens-file gets the tokens with mode 0600, and a store whose tokens
 * were all revoked makes none at the next start.
 */
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { runCli, startServe, type ServerProcess } from './cli-process.js';

const running: ServerProcess[] = [];
const dirs: { cleanup: () => void }[] = [];

function workDir(): string {
  const dir = tempDir('fencegate-first-run-');
  dirs.push(dir);
  return dir.path;
}

async function serve(args: string[]): Promise<ServerProcess> {
  const server = await startServe(['--port', '0', ...args]);
  running.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop()));
  for (const dir of dirs.splice(0)) dir.cleanup();
});

async function scopesStatus(server: ServerProcess, token: string): Promise<number> {
  const response = await fetch(`${server.url}/v1/scopes`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.arrayBuffer();
  return response.status;
}

describe('first-run tokens of fencegate serve', () => {
  it('prints only their ids when stdout is not a terminal, and makes none again once revoked', async () => {
    const dir = workDir();
    const store = `sqlite:${join(dir, 'fencegate.db')}`;
    const server = await serve(['--store', store]);
    const { stdout } = server.output();
    expect(stdout).toContain('first run');
    expect(stdout).not.toContain('fg_');
    const ids = [...stdout.matchAll(/token id[^:]*:\s+(tok_\S+)/g)].map((match) => match[1]!);
    expect(ids).toHaveLength(2);
    expect(stdout).toContain('fencegate token create --tenant dev --role operator');
    expect(await server.stop()).toBe(0);

    for (const id of ids) {
      expect((await runCli(['token', 'revoke', id, '--store', store])).code).toBe(0);
    }
    const again = await serve(['--store', store]);
    expect(again.output().stdout).not.toContain('first run');
    expect((await runCli(['token', 'list', '--store', store])).stdout).not.toContain('tok_');
  });

  it('writes them to --first-run-tokens-file, readable by its owner only', async () => {
    const dir = workDir();
    const file = join(dir, 'tokens.txt');
    // A file already there, readable by everyone, is narrowed before the secrets go in.
    writeFileSync(file, 'old\n');
    chmodSync(file, 0o644);
    const server = await serve([
      '--store',
      `sqlite:${join(dir, 'fencegate.db')}`,
      '--first-run-tokens-file',
      file,
    ]);
    const { stdout } = server.output();
    expect(stdout).not.toContain('fg_');
    expect(stdout).toContain(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = readFileSync(file, 'utf8');
    const operator = /operator token, tenant "dev":\s+(fg_\S+)/.exec(written)?.[1] ?? '';
    const admin = /admin token \(manages tokens only\):\s+(fg_\S+)/.exec(written)?.[1] ?? '';
    expect(operator).toMatch(/^fg_/);
    expect(admin).toMatch(/^fg_/);
    expect(written).not.toContain('old');
    expect(await scopesStatus(server, operator)).toBe(200);
    expect(await scopesStatus(server, admin)).toBe(403);
  });
});
