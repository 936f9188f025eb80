/**
 * The Verify panel shows what the server's background verifier found, kept per tenant: a
 * violation in one tenant's history shows on that tenant's panel, never on another's, and the
 * panel replays nothing itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { serverFixture, type ServerFixture } from '../server/fixture.js';

let fx: ServerFixture | undefined;
let dir: string | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function cookieOf(f: ServerFixture, token: string): Promise<string> {
  const response = await f.app.inject({
    method: 'POST',
    url: '/ui/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token }).toString(),
  });
  expect(response.statusCode).toBe(303);
  return String(response.headers['set-cookie']).split(';')[0] ?? '';
}

async function verifyPanel(f: ServerFixture, cookie: string): Promise<string> {
  const response = await f.app.inject({
    method: 'GET',
    url: '/ui/panels/verify',
    headers: { cookie },
  });
  expect(response.statusCode).toBe(200);
  return response.body;
}

it("shows a violation on its own tenant's panel only", async () => {
  dir = mkdtempSync(join(tmpdir(), 'fencegate-verify-panel-'));
  const path = join(dir, 'store.db');
  const f = (fx = await serverFixture({ path, storeGauges: { intervalMs: 20 } }));
  for (const [tenant, worker] of [
    ['tenant-a', f.tokens.workerA],
    ['tenant-b', f.tokens.workerB],
  ] as const) {
    const grant = await f.send('POST', '/v1/leases/acquire', worker, {
      scope: `${tenant}-scope`,
      holder: 'w',
      ttlMs: 60_000,
    });
    expect(grant.statusCode).toBe(200);
    const commit = await f.send('POST', '/v1/commit', worker, {
      scope: `${tenant}-scope`,
      fence: grant.json<{ fence: number }>().fence,
      operationId: `${tenant}-op`,
      writes: [{ name: 'r', expectRevision: 0, value: 1 }],
    });
    expect(commit.json<{ outcome: string }>().outcome).toBe('committed');
  }
  // A faulty store appends an accepted commit of tenant-a reporting a fence no grant issued.
  const db = new Database(path);
  db.prepare(
    `INSERT INTO audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id, holder,
       policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads)
     SELECT at, tenant, scope, kind, outcome, reason, task_id, operation_id || '-again', holder,
       policy_version, fence, current_fence + 5, lease_expires_at, NULL, effect_key, reads
     FROM audit WHERE tenant = 'tenant-a' AND kind = 'commit'`,
  ).run();
  db.close();

  const a = await cookieOf(f, f.tokens.operatorA);
  const b = await cookieOf(f, f.tokens.operatorB);
  let panelA = '';
  for (let i = 0; i < 200 && !panelA.includes('fence_mismatch'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    panelA = await verifyPanel(f, a);
  }
  expect(panelA).toContain('fence_mismatch');
  expect(panelA).toMatch(/<span class="big">1<\/span> violations in 3 audit entries/);
  expect(panelA).toContain('tenant-a-scope');

  const panelB = await verifyPanel(f, b);
  expect(panelB).toMatch(/<span class="big">0<\/span> violations in 2 audit entries/);
  expect(panelB).not.toContain('tenant-a-scope');
  expect(panelB).not.toContain('fence_mismatch');
});
