/**
 * A `fencegate serve` process killed with SIGKILL while commits are in flight loses no commit it
 * acknowledged: after a restart on the same store every acknowledged operation reads back as
 * committed, every record holds at least its acknowledged revision, and the history verifies.
 */
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { startServe, type ServerProcess } from './cli-process.js';

const LANES = 16;
const ACKNOWLEDGED_BEFORE_KILL = 400;

async function operatorClient(server: ServerProcess, adminToken: string): Promise<FencegateClient> {
  const response = await fetch(`${server.url}/v1/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'load', role: 'operator' }),
  });
  const { token } = (await response.json()) as { token: string };
  return clientFor(server, token);
}

function clientFor(server: ServerProcess, token: string): FencegateClient {
  return new FencegateClient({ url: server.url, token, retries: 0, timeoutMs: 5000 });
}

export function defineSigkillCase(storeUrl: () => string | Promise<string>): void {
  it(
    'a server killed with SIGKILL under load loses no acknowledged commit',
    { timeout: 60_000 },
    async () => {
      const adminToken = `admin-${randomBytes(16).toString('hex')}`;
      const store = await storeUrl();
      const env = { FENCEGATE_ADMIN_TOKEN: adminToken };
      const server = await startServe(['--port', '0', '--store', store], env);
      const client = await operatorClient(server, adminToken);

      const grants = await Promise.all(
        Array.from({ length: LANES }, (_, lane) =>
          client.acquire({ scope: `load-${lane}`, holder: 'loader', ttlMs: 3_600_000 }),
        ),
      );
      const acknowledged: { operationId: string; scope: string; revision: number }[] = [];
      let killed = false;
      let kill: () => void = () => undefined;
      const killing = new Promise<void>((resolve) => (kill = resolve));

      const lane = async (index: number): Promise<void> => {
        const grant = grants[index]!;
        for (let revision = 0; !killed; revision++) {
          const operationId = `lane-${index}-${revision}`;
          try {
            const result = await client.commit({
              scope: grant.scope,
              fence: grant.fence,
              operationId,
              writes: [
                { name: 'counter', expectRevision: revision, value: { revision: revision + 1 } },
              ],
            });
            expect(result.outcome).toBe('committed');
            acknowledged.push({ operationId, scope: grant.scope, revision: revision + 1 });
            if (acknowledged.length === ACKNOWLEDGED_BEFORE_KILL) kill();
          } catch {
            return; // the server is gone: this commit's outcome is unknown, checked below
          }
        }
      };
      const lanes = Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));
      await killing;
      killed = true;
      server.child.kill('SIGKILL');
      await server.exited;
      await lanes;

      const restarted = await startServe(['--port', '0', '--store', store], env);
      try {
        const after = await operatorClient(restarted, adminToken);
        for (const commit of acknowledged) {
          const stored = await after.getOperation(commit.operationId);
          expect(stored?.outcome, commit.operationId).toBe('committed');
        }
        const highest = new Map<string, number>();
        for (const { scope, revision } of acknowledged) {
          highest.set(scope, Math.max(highest.get(scope) ?? 0, revision));
        }
        for (const [scope, revision] of highest) {
          const record = await after.getRecord(scope, 'counter');
          expect(record.revision).toBeGreaterThanOrEqual(revision);
          expect(record.value).toEqual({ revision: record.revision });
        }
        expect((await after.verify()).violations).toEqual([]);
      } finally {
        await restarted.stop();
      }
    },
  );
}
