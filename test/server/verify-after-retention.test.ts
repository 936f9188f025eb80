/**
 * After audit retention the server keeps verifying: GET /v1/verify continues from the checkpoint
 * the store kept for the pruned entries, and after a restart the background verifier starts from
 * it, so fencegate_verify_violations stays 0. On every store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { applyRetention } from '../../src/retention/retention.js';
import { issueToken } from '../../src/server/tokens.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';

const ADMIN = 'admin-token-for-retention-tests-01';
const TENANT = 'acme';

describe.each(AREA_STORES)('verify after audit retention on $name', (kind) => {
  const stores = storesFor(kind, 'verify-retention');
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const start = async (url: string) =>
    (running = await startServer({ store: url, host: '127.0.0.1', port: 0, adminToken: ADMIN }));

  async function call(method: 'GET' | 'POST', path: string, token: string, body?: unknown) {
    const response = await fetch(`${running!.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function commit(worker: string, fence: number, n: number): Promise<void> {
    const answer = await call('POST', '/v1/commit', worker, {
      scope: 'wf/memory',
      fence,
      operationId: `op-${n}`,
      writes: [{ name: 'notes', expectRevision: n - 1, value: { n } }],
    });
    expect(answer.body.outcome).toBe('committed');
  }

  async function backgroundVerifier(): Promise<{ violations: number; checked: number }> {
    for (;;) {
      const text = await (await fetch(`${running!.url}/metrics`)).text();
      const value = (name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
      const last = value('fencegate_verify_last_run_timestamp_seconds');
      if (last !== undefined && Number(last) > 0) {
        return {
          violations: Number(value('fencegate_verify_violations')),
          checked: Number(value('fencegate_verify_checked_entries')),
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('answers GET /v1/verify from the kept checkpoint, and reports no violation after a restart', async () => {
    const url = stores.freshUrl();
    await start(url);
    const operator = (await issueToken(running!.store, { tenant: TENANT, role: 'operator' })).token;
    const worker = (await issueToken(running!.store, { tenant: TENANT, role: 'worker' })).token;
    const grant = await call('POST', '/v1/leases/acquire', worker, {
      scope: 'wf/memory',
      holder: 'w',
      ttlMs: 600_000,
    });
    const fence = grant.body.fence as number;
    for (let n = 1; n <= 3; n++) await commit(worker, fence, n);

    const verified = await verifyStore(running!.store);
    expect(verified.ok).toBe(true);
    const retention = await applyRetention(running!.store, {
      auditCheckpoint: verified.checkpoint,
    });
    expect(retention.auditDeleted).toBeGreaterThan(0);

    const afterRetention = await call('GET', '/v1/verify', operator);
    expect(afterRetention).toMatchObject({ status: 200, body: { ok: true, violations: [] } });

    // Revision 4 follows the 3 the pruned entries wrote: only the kept checkpoint knows them.
    await commit(worker, fence, 4);
    const afterMore = await call('GET', '/v1/verify', operator);
    expect(afterMore).toMatchObject({ status: 200, body: { ok: true, violations: [] } });
    expect(afterMore.body.checked).toBe(1);

    await running!.close();
    await start(url);
    const background = await backgroundVerifier();
    expect(background.violations).toBe(0);
    expect(background.checked).toBeGreaterThanOrEqual(verified.checkpoint.checked);
    const again = await call('GET', '/v1/verify', operator);
    expect(again).toMatchObject({ status: 200, body: { ok: true, checked: 1 } });
  });
});
