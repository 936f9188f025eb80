/**
 * Tokens as a user manages them with the built CLI (run `npm run build` first): two servers
 * started at once on one empty store (a SQLite file, a PostgreSQL schema, an etcd key prefix) write first-run tokens
 * exactly once between them, with their ids, to the file each was given; `token list` shows those ids and never a token;
 * `token revoke ID` deletes one, and requests with it are refused.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runCli, startServe, type ServerProcess } from './cli-process.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const BANNER_IDS = /Their ids are (tok_\S+) \(admin\) and (tok_\S+) \(operator\)/;

describe.each(AREA_STORES)('on $name', (kind) => {
  const stores = storesFor(kind, 'e2e_tokens');

  // Each case starts server processes (about a second of CPU each); under the whole suite's load a
  // case has taken half the default 30 s.
  it(
    'two servers starting at once on an empty store create first-run tokens once',
    { timeout: 60_000 },
    async () => {
      const store = stores.freshUrl();
      const dir = tempDir('fencegate-e2e-tokens-');
      cleanups.push(() => dir.cleanup());
      // Not a terminal: each server would write its secrets to its own file only.
      const files = [0, 1].map((n) => join(dir.path, `tokens-${n}.txt`));
      const servers: ServerProcess[] = await Promise.all(
        files.map((file) =>
          startServe(['--store', store, '--port', '0', '--first-run-tokens-file', file]),
        ),
      );
      for (const server of servers) cleanups.push(() => server.stop().then(() => undefined));

      const banners = servers.filter((server) => server.output().stdout.includes('first run'));
      expect(banners).toHaveLength(1);
      expect(files.filter((file) => existsSync(file))).toHaveLength(1);
      const stdout = readFileSync(files[servers.indexOf(banners[0]!)]!, 'utf8');
      const [, adminId, operatorId] = BANNER_IDS.exec(stdout) ?? [];
      const operatorToken = /operator token, tenant "dev":\s+(fg_\S+)/.exec(stdout)?.[1] ?? '';
      expect(adminId).toMatch(/^tok_/);

      const listed = await runCli(['token', 'list', '--store', store]);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ID\s+TENANT\s+ROLE\s+CREATED\s+LABEL$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 3))).toEqual(
        expect.arrayContaining([
          [adminId, '_admin', 'admin'],
          [operatorId, 'dev', 'operator'],
        ]),
      );
      expect(lines).toHaveLength(3);
      expect(listed.stdout).not.toContain('fg_');

      const scopes = (server: ServerProcess) =>
        fetch(`${server.url}/v1/scopes`, { headers: { authorization: `Bearer ${operatorToken}` } });
      expect((await scopes(servers[0]!)).status).toBe(200);
      const revoked = await runCli(['token', 'revoke', operatorId!, '--store', store]);
      expect(revoked).toMatchObject({ code: 0 });
      expect(revoked.stderr).toContain(`token ${operatorId!} revoked`);
      // Revoked in the store by another process: every server refuses it (a server may cache
      // tokens for a documented short bound, so this waits for the refusal rather than timing it).
      for (const server of servers) await until(async () => (await scopes(server)).status === 401);

      const again = await runCli(['token', 'revoke', operatorId!, '--store', store]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`no token with id ${operatorId!}`);
    },
  );
});
