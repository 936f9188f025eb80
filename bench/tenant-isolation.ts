/**
 * One tenant's storm against another tenant's commits, over HTTP on one server with the per-tenant
 * rate limit on (`--tenant-rate`): a healthy tenant's commits/s alone, then while a second tenant
 * sends stale-fence commits on 64 connections as fast as the server answers them (its requests
 * past the rate are answered 429 before any store work). `tenantIsolationRatio` is the second
 * over the first (target >= 0.9). The rate is set from what the healthy tenant reaches alone on a
 * first server (a quarter above it), so the limit binds the storm and not the healthy tenant
 * whatever the machine does; both measured runs are on the second server.
 */
import { join } from 'node:path';
import { FencegateClient } from '../src/client/index.js';
import { Fencegate } from '../src/gate.js';
import { buildServer } from '../src/server/build-server.js';
import type { TenantRateLimit } from '../src/server/tenant-rate-limit.js';
import { issueToken } from '../src/server/tokens.js';
import { runLoad, type LoadResult } from './http/load.js';
import { runConcurrent, type RunStats } from './stats.js';

const HEALTHY_IN_FLIGHT = 16;
const STORM_CONNECTIONS = 64;
const SCOPES = 64;
const HOUR = 3_600_000;

export interface TenantIsolation {
  rate: TenantRateLimit;
  alone: RunStats;
  withStorm: RunStats;
  storm: LoadResult;
  ratio: number;
  /** Audit violations `verify` finds in both tenants afterwards (must be 0). */
  violations: number;
}

interface Served {
  url: string;
  healthy: FencegateClient;
  stormToken: string;
  close(): Promise<void>;
}

async function serve(gate: Fencegate, rate: TenantRateLimit): Promise<Served> {
  const app = await buildServer({ store: gate.store, tenantRateLimit: rate });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const healthyToken = (await issueToken(gate.store, { tenant: 'healthy', role: 'worker' })).token;
  const stormToken = (await issueToken(gate.store, { tenant: 'storm', role: 'worker' })).token;
  const healthy = new FencegateClient({ url, token: healthyToken, coalesceCommits: false });
  return {
    url,
    healthy,
    stormToken,
    async close() {
      await healthy.close();
      await app.close();
    },
  };
}

export async function tenantIsolation(dir: string, seconds: number): Promise<TenantIsolation> {
  const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'isolation.db')}` });
  try {
    const healthyGate = gate.forTenant('healthy');
    const storm = gate.forTenant('storm');
    const fences: number[] = [];
    for (let n = 0; n < SCOPES; n++) {
      const scope = `iso/${n}`;
      fences.push((await healthyGate.acquire({ scope, holder: 'w', ttlMs: HOUR })).fence);
      // The storm's scopes move on past its workers' fence 1: each of its commits is stale.
      await storm.acquire({ scope, holder: 'old', ttlMs: HOUR });
      await storm.takeover(scope, { holder: 'new', ttlMs: HOUR });
    }
    let run = 0;
    const commitsOf =
      (client: FencegateClient) =>
      async (i: number): Promise<void> => {
        const n = i % SCOPES;
        const result = await client.commit({
          scope: `iso/${n}`,
          fence: fences[n]!,
          operationId: `iso-${run}-${i}`,
          writes: [{ name: `r-${run}-${i}`, expectRevision: 0, value: { n: i } }],
        });
        if (result.outcome !== 'committed') throw new Error(`rejected: ${result.error.code}`);
      };

    const probe = await serve(gate, { perSecond: 1_000_000 });
    run = 1;
    const reach = await runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(probe.healthy));
    await probe.close();

    const perSecond = Math.max(10, Math.round(reach.opsPerSec * 1.25));
    const rate = { perSecond, burst: Math.max(1, Math.round(perSecond / 10)) };
    const served = await serve(gate, rate);
    try {
      run = 2;
      const alone = await runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(served.healthy));
      run = 3;
      let k = 0;
      const [withStorm, stormLoad] = await Promise.all([
        runConcurrent(seconds, HEALTHY_IN_FLIGHT, commitsOf(served.healthy)),
        runLoad(
          served.url,
          {
            method: 'POST',
            path: '/v1/commit',
            headers: {
              authorization: `Bearer ${served.stormToken}`,
              'content-type': 'application/json',
            },
            body: () => {
              k += 1;
              return JSON.stringify({
                scope: `iso/${k % SCOPES}`,
                fence: 1,
                operationId: `storm-${k}`,
                writes: [{ name: 'x', expectRevision: 0, value: k }],
              });
            },
          },
          { connections: STORM_CONNECTIONS, seconds },
        ),
      ]);
      const verified = await Promise.all([healthyGate.verify(), storm.verify()]);
      return {
        rate,
        alone,
        withStorm,
        storm: stormLoad,
        ratio: withStorm.opsPerSec / alone.opsPerSec,
        violations: verified.reduce((sum, report) => sum + report.violations.length, 0),
      };
    } finally {
      await served.close();
    }
  } finally {
    await gate.close();
  }
}
