/**
 * Where `fencegate serve` shows its first-run tokens (the built CLI in a child process; run
 * `npm run build` first): a log stream (stdout not a terminal) gets their ids and no secret, a
 * file named by --first-run-tokens-file gets the tokens with mode 0600, a store whose tokens
 * were all revoked makes none at the next start, and a start that cannot listen or cannot write
 * that file makes none, so the next start makes and shows them.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takenPort } from '../helpers/free-port.js';
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

// Each case starts server processes (about a second of CPU each); under the whole suite's load a
// case has taken half the default 30 s.
describe('first-run tokens of fencegate serve', { timeout: 60_000 }, () => {
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

  it('are not made by a start whose port is taken, which says so in one line; the next start makes them', async () => {
    const store = `sqlite:${join(workDir(), 'fencegate.db')}`;
    const taken = await takenPort();
    const failed = await runCli(['serve', '--port', String(taken.port), '--store', store]).finally(
      () => taken.close(),
    );
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toBe(
      `fencegate serve: port ${taken.port} on 127.0.0.1 is already in use: stop what listens ` +
        'there, or choose another port with --port (or FENCEGATE_PORT); nothing was started\n',
    );

    const server = await serve(['--store', store]);
    expect(server.output().stdout).toContain('fencegate first run');
    expect([...server.output().stdout.matchAll(/token id[^:]*:\s+tok_\S+/g)]).toHaveLength(2);
  });

  it('are not made by a start on a host that is not an address of this machine, which says so in one line', async () => {
    const store = `sqlite:${join(workDir(), 'fencegate.db')}`;
    // 192.0.2.0/24 is reserved for documentation: no machine has it.
    const failed = await runCli(['serve', '--host', '192.0.2.1', '--port', '0', '--store', store]);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toBe(
      'fencegate serve: 192.0.2.1 is not an address of this machine: choose one with --host ' +
        '(or FENCEGATE_HOST); nothing was started\n',
    );
    expect((await runCli(['token', 'list', '--store', store])).stdout).not.toContain('tok_');
  });

  it('are not made by a start whose --first-run-tokens-file cannot be written; the next start makes them', async () => {
    const dir = workDir();
    const store = `sqlite:${join(dir, 'fencegate.db')}`;
    const unwritable = join(dir, 'no-such-dir', 'tokens.txt');
    const failed = await runCli([
      ...['serve', '--port', '0', '--store', store],
      ...['--first-run-tokens-file', unwritable],
    ]);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toBe(
      `fencegate serve: --first-run-tokens-file ${unwritable} cannot be written (ENOENT): ` +
        'name a file this user may write; nothing was started\n',
    );

    const file = join(dir, 'tokens.txt');
    const server = await serve(['--store', store, '--first-run-tokens-file', file]);
    expect(readFileSync(file, 'utf8')).toMatch(/operator token, tenant "dev":\s+fg_\S+/);
    expect(await server.stop()).toBe(0);
    // A start that makes no tokens leaves no file behind.
    const unused = join(dir, 'unused.txt');
    await serve(['--store', store, '--first-run-tokens-file', unused]);
    expect(existsSync(unused)).toBe(false);
  });
});
