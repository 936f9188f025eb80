/**
 * `fencegate serve` in a terminal (what `npm start` is) prints the first-run tokens themselves;
 * anywhere else it prints their ids only.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { showFirstRunTokens } from '../../src/cli/serve.js';
import type { FirstRunTokens } from '../../src/server/start-server.js';

const TOKENS: FirstRunTokens = {
  adminToken: 'fg_admin-secret',
  adminTokenId: 'tok_admin',
  operatorToken: 'fg_operator-secret',
  operatorTokenId: 'tok_operator',
  operatorTenant: 'dev',
};

async function printed(stdoutIsTTY: boolean, store = 'sqlite:./fencegate.db'): Promise<string> {
  let out = '';
  await showFirstRunTokens(TOKENS, 'http://127.0.0.1:7420', store, undefined, {
    stdout: (text) => (out += text),
    stderr: () => undefined,
    env: {},
    stdoutIsTTY,
  });
  return out;
}

describe('first-run tokens on stdout', () => {
  it('are printed to a terminal, with their ids and the dashboard URL', async () => {
    const out = await printed(true);
    expect(out).toContain('fg_admin-secret');
    expect(out).toContain('fg_operator-secret');
    expect(out).toContain('tok_admin');
    expect(out).toContain('Dashboard: http://127.0.0.1:7420/ui');
  });

  it('are not printed to anything else: only their ids', async () => {
    const out = await printed(false);
    expect(out).not.toContain('fg_');
    expect(out).toContain('tok_admin');
    expect(out).toContain('tok_operator');
  });

  it("name the server's store in every command they print, runnable from any folder", async () => {
    const store = `--store sqlite:${resolve('fencegate.db')}`;
    for (const out of [await printed(true), await printed(false)]) {
      const commands = out.split('\n').filter((line) => line.includes('fencegate token'));
      expect(commands.length).toBeGreaterThan(0);
      for (const line of commands) {
        expect(line).toContain('npx fencegate token');
        expect(line).toContain(store);
      }
    }
  });

  it('quote a store URL the shell would split, and never show its password', async () => {
    const out = await printed(false, 'postgres://app:secret@db:5432/app?schema=fg&x=1');
    expect(out).toContain("--store 'postgres://app:***@db:5432/app?schema=fg&x=1'");
    expect(out).not.toContain(':secret@');
  });
});
