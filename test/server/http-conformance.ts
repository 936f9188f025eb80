/**
 * The store conformance suite, unchanged, through FencegateClient against real `fencegate serve`
 * processes: two servers on one store, both with a manual store clock (test-only), behaving as
 * one. Each test gets fresh tenants, which are empty namespaces of the same store.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { defineStoreConformanceSuite } from '../../src/testing/vitest/index.js';
import { startServe, type ServerProcess } from '../e2e/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';

export interface HttpConformanceOptions {
  name: string;
  /** The store URL both servers open; called once, before they start. */
  storeUrl(): string | Promise<string>;
  /** Runs after both servers stopped. */
  cleanup(): void | Promise<void>;
}

export function defineHttpConformanceSuite(options: HttpConformanceOptions): void {
  const adminToken = `test-admin-${randomBytes(16).toString('hex')}`;
  let first: ServerProcess;
  let second: ServerProcess;
  let tenants = 0;
  const config = tempDir();

  beforeAll(async () => {
    const env = { FENCEGATE_TEST_CLOCK: 'manual', FENCEGATE_ADMIN_TOKEN: adminToken };
    const store = await options.storeUrl();
    // The suite sends every rollout command itself, as a test of the store contract does; a
    // server's own driver would also act on the rollouts with holds that the cases start.
    const rollouts = join(config.path, 'rollouts.json');
    writeFileSync(rollouts, JSON.stringify({ driver: false }));
    const args = ['--port', '0', '--store', store, '--rollouts', rollouts];
    first = await startServe(args, env);
    second = await startServe(args, env);
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    config.cleanup();
    await options.cleanup();
  });

  async function admin(server: ServerProcess, path: string, body: unknown): Promise<unknown> {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
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
    name: options.name,
    capabilities: { sharedAcrossProcesses: true, exactLeaseExpiry: true, rollouts: true },
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
        connectAgain: () =>
          Promise.resolve(new FencegateClient({ url: second.url, token: tokenA })),
      };
    },
    destroyStore: (subject) => subject.gate.close(),
  });
}
