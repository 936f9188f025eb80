/**
 * The store conformance suite, unchanged, through FencegateClient against real `fencegate serve`
 * processes: two servers on one SQLite file, both with a manual store clock (test-only). Each test
 * gets fresh tenants, which are empty namespaces of the same store.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { defineStoreConformanceSuite } from '../../src/testing/index.js';
import { startServe, type ServerProcess } from '../e2e/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const ADMIN_TOKEN = `test-admin-${randomBytes(16).toString('hex')}`;
const dir = tempDir('fencegate-http-conformance-');
let first: ServerProcess;
let second: ServerProcess;
let tenants = 0;

beforeAll(async () => {
  const env = { FENCEGATE_TEST_CLOCK: 'manual', FENCEGATE_ADMIN_TOKEN: ADMIN_TOKEN };
  const store = `sqlite:${join(dir.path, 'store.db')}`;
  first = await startServe(['--port', '0', '--store', store], env);
  second = await startServe(['--port', '0', '--store', store], env);
});

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  dir.cleanup();
});

async function admin(server: ServerProcess, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function operatorToken(tenant: string): Promise<string> {
  const answer = (await admin(first, '/v1/admin/tokens', { tenant, role: 'operator' })) as {
    token: string;
  };
  return answer.token;
}

defineStoreConformanceSuite({
  name: 'http (fencegate serve + FencegateClient)',
  capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true },
  async createStore() {
    tenants += 1;
    const [tokenA, tokenB] = await Promise.all([
      operatorToken(`t${tenants}-a`),
      operatorToken(`t${tenants}-b`),
    ]);
    return {
      gate: new FencegateClient({ url: first.url, token: tokenA }),
      other: new FencegateClient({ url: first.url, token: tokenB }),
      // Both servers run their own manual clock; they start equal and move together.
      advanceClock: async (ms: number) => {
        await Promise.all(
          [first, second].map((server) => admin(server, '/v1/test/clock', { advanceMs: ms })),
        );
      },
      connectAgain: () => Promise.resolve(new FencegateClient({ url: second.url, token: tokenA })),
    };
  },
  destroyStore: (subject) => subject.gate.close(),
});
