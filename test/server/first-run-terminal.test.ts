/**
 * `fencegate serve` in a terminal (what `npm start` is) prints the first-run tokens themselves;
 * anywhere else it prints their ids only.
 */
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

async function printed(stdoutIsTTY: boolean): Promise<string> {
  let out = '';
  await showFirstRunTokens(TOKENS, 'http://127.0.0.1:7420', undefined, {
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
});
