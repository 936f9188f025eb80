/**
 * The dispatch, policy, cutover, jobs and verify endpoints through the whole HTTP stack
 * (fastify.inject): answers match their schemas, every documented error code comes back with its
 * status, a refusal's message is the library's for the same input, and the roles hold (claim,
 * complete and job events for workers; policies, cutovers and verify for operators only). Every
 * test ends with a verify of the audit history.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import {
  validateClaim,
  validateComplete,
  validateCutover,
  validateJobEvents,
  validatePolicy,
} from '../../src/core/validate-ops.js';
import { isFencegateError } from '../../src/errors.js';
import * as answers from '../../src/server/schemas/answers.js';
import type { CutoverReport, CutoverResult, Intent, Policy } from '../../src/types.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  errorOf,
  expectError,
  expectHistoryValid,
  expectShape,
  serverFixture,
  tokenIdOf,
  type ServerFixture,
} from './fixture.js';

const SCOPE = 'wf-1/memory';

let fx: ServerFixture | undefined;
afterEach(async () => {
  const current = fx;
  fx = undefined;
  if (current === undefined) return;
  try {
    await expectHistoryValid(current);
  } finally {
    await current.close();
  }
});

/** The message the library gives for the same input. */
function libraryMessage(validate: () => unknown): string {
  try {
    validate();
  } catch (error) {
    if (isFencegateError(error)) return error.message;
    throw error;
  }
  throw new Error('the library accepted the input');
}

/** Acquires SCOPE for w1 and commits one intent per [effectKey, target]. */
async function commitIntents(f: ServerFixture, intents: [string, string][]): Promise<void> {
  const worker = f.tokens.workerA;
  const grant = await f.send('POST', '/v1/leases/acquire', worker, {
    scope: SCOPE,
    holder: 'w1',
    ttlMs: 60_000,
  });
  expect(grant.statusCode).toBe(200);
  const committed = await f.send('POST', '/v1/commit', worker, {
    scope: SCOPE,
    fence: 1,
    operationId: 'op-intents',
    intents: intents.map(([effectKey, target]) => ({ effectKey, target, payload: { effectKey } })),
  });
  expect(committed.statusCode).toBe(200);
}

function claim(f: ServerFixture, body: Record<string, unknown>) {
  return f.send('POST', '/v1/intents/claim', f.tokens.workerA, body);
}

function complete(f: ServerFixture, effectKey: string, body: Record<string, unknown>) {
  return f.send('POST', `/v1/intents/${effectKey}/complete`, f.tokens.workerA, body);
}

function claimedKeys(response: Awaited<ReturnType<typeof claim>>): string[] {
  const body = expectShape(response, 200, answers.IntentListSchema) as { items: Intent[] };
  return body.items.map((intent) => intent.effectKey).sort();
}

describe('claim and complete (worker)', () => {
  it('claims due intents under a claim fence and records each outcome', async () => {
    const f = (fx = await serverFixture());
    await commitIntents(f, [
      ['fx-1', 'crm'],
      ['fx-2', 'crm'],
      ['fx-3', 'mail'],
    ]);
    const now = f.clock.now();
    const first = await claim(f, { dispatcher: 'd1', ttlMs: 1_000, limit: 10, targets: ['crm'] });
    expect(claimedKeys(first)).toEqual(['fx-1', 'fx-2']);
    for (const intent of first.json<{ items: Intent[] }>().items) {
      expect(intent).toMatchObject({
        status: 'claimed',
        claimFence: 1,
        attempts: 1,
        claimedBy: 'd1',
        claimExpiresAt: now + 1_000,
      });
    }
    // Claimed intents are not claimed again while their claim holds.
    expect(
      claimedKeys(await claim(f, { dispatcher: 'd2', ttlMs: 1_000, limit: 10, targets: ['crm'] })),
    ).toEqual([]);

    const delivered = expectShape(
      await complete(f, 'fx-1', { claimFence: 1, outcome: 'delivered', providerRef: 'rcpt-1' }),
      200,
      answers.IntentSchema,
    );
    expect(delivered).toMatchObject({ status: 'delivered', providerRef: 'rcpt-1' });
    const again = await complete(f, 'fx-1', { claimFence: 1, outcome: 'delivered' });
    expectError(again, 'stale_claim');
    expect(errorOf(again).details).toMatchObject({ currentClaimFence: 1, status: 'delivered' });

    expect(
      expectShape(
        await complete(f, 'fx-2', {
          claimFence: 1,
          outcome: 'failed',
          retryable: true,
          retryAfterMs: 500,
          error: 'status 503',
        }),
        200,
        answers.IntentSchema,
      ),
    ).toMatchObject({ status: 'pending', nextAttemptAt: now + 500, lastError: 'status 503' });
    // Not due before its backoff; the other target is not asked for.
    expect(
      claimedKeys(await claim(f, { dispatcher: 'd1', ttlMs: 1_000, limit: 10, targets: ['crm'] })),
    ).toEqual([]);
    f.clock.advance(500);
    expect(
      claimedKeys(await claim(f, { dispatcher: 'd1', ttlMs: 1_000, limit: 10, targets: ['crm'] })),
    ).toEqual(['fx-2']);
    expectError(await complete(f, 'fx-2', { claimFence: 1, outcome: 'delivered' }), 'stale_claim');
    expect(
      (await complete(f, 'fx-2', { claimFence: 2, outcome: 'unknown', retryAfterMs: 0 })).json(),
    ).toMatchObject({ status: 'unknown', unknownOutcomes: 1 });

    // Without targets every target is claimed: the unknown one (to reconcile) and the other.
    expect(claimedKeys(await claim(f, { dispatcher: 'd1', ttlMs: 1_000, limit: 10 }))).toEqual([
      'fx-2',
      'fx-3',
    ]);
    expect(
      (await complete(f, 'fx-3', { claimFence: 1, outcome: 'needs_attention' })).json(),
    ).toMatchObject({ status: 'needs_attention' });

    // A claim that lapsed is taken by another dispatcher; the first one's outcome is refused.
    f.clock.advance(1_000);
    const taken = await claim(f, { dispatcher: 'd2', ttlMs: 1_000, limit: 10 });
    expect(taken.json<{ items: Intent[] }>().items).toMatchObject([
      { effectKey: 'fx-2', claimFence: 4, claimedBy: 'd2' },
    ]);
    expectError(await complete(f, 'fx-2', { claimFence: 3, outcome: 'delivered' }), 'stale_claim');
    expect(
      (await complete(f, 'fx-2', { claimFence: 4, outcome: 'delivered' })).json(),
    ).toMatchObject({ status: 'delivered', attempts: 4 });

    expectError(await complete(f, 'fx-404', { claimFence: 1, outcome: 'delivered' }), 'not_found');
    expectShape(
      await f.send('GET', '/v1/intents/fx-2', f.tokens.workerA),
      200,
      answers.IntentSchema,
    );
    const audit = await f.send('GET', '/v1/audit?kind=intent', f.tokens.operatorA);
    expect(audit.json<{ items: unknown[] }>().items.length).toBeGreaterThan(8);
  });

  it('refuses malformed claims and completions with the library message', async () => {
    const f = (fx = await serverFixture());
    const claims: unknown[] = [
      { dispatcher: 'd1', ttlMs: 50, limit: 1 },
      { dispatcher: 'd 1', ttlMs: 1_000, limit: 1 },
      { dispatcher: 'd1', ttlMs: 1_000, limit: 0 },
      { dispatcher: 'd1', ttlMs: 1_000, limit: 1, targets: [] },
      { dispatcher: 'd1', ttlMs: 1_000, limit: 1, targets: ['crm/hook'] },
      { dispatcher: 'd1', ttlMs: 1_000, limit: 1, lease: 5 },
    ];
    for (const body of claims) {
      const response = await f.send('POST', '/v1/intents/claim', f.tokens.workerA, body);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toBe(
        libraryMessage(() => validateClaim(body, DEFAULT_LIMITS)),
      );
    }
    const completions: unknown[] = [
      { claimFence: 1, outcome: 'done' },
      { claimFence: -1, outcome: 'delivered' },
      { claimFence: 1, outcome: 'failed', retryable: 'yes' },
      { claimFence: 1, outcome: 'failed', retryAfterMs: 86_400_001 },
      { claimFence: 1, outcome: 'delivered', providerRef: 'p'.repeat(257) },
      { claimFence: 1, outcome: 'failed', error: 'e'.repeat(1025) },
      { outcome: 'delivered' },
      { claimFence: 1, outcome: 'failed', code: 'no_such_code' },
      { claimFence: 1, outcome: 'delivered', code: 'target_not_allowed' },
      { claimFence: 1, outcome: 'failed', retryable: true, code: 'target_not_allowed' },
    ];
    for (const body of completions) {
      const response = await f.send('POST', '/v1/intents/fx-1/complete', f.tokens.workerA, body);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toBe(libraryMessage(() => validateComplete(body)));
    }
    const badKey = await f.send('POST', '/v1/intents/bad%20key/complete', f.tokens.workerA, {
      claimFence: 1,
      outcome: 'delivered',
    });
    expectError(badKey, 'invalid_request');
    expect(errorOf(badKey).message).toMatch(/^effectKey must be/);
  });
});

describe('policies (operator)', () => {
  it('answers 201 when created, 200 the same again, 409 policy_conflict for another digest', async () => {
    const f = (fx = await serverFixture());
    const op = f.tokens.operatorA;
    const body = { version: 'v1', digest: 'sha256:aa', description: 'first' };
    const created = expectShape(
      await f.send('POST', '/v1/policies', op, body),
      201,
      answers.PolicySchema,
    ) as Policy;
    expect(created).toEqual({
      version: 'v1',
      digest: 'sha256:aa',
      description: 'first',
      registeredBy: await tokenIdOf(f, op),
      registeredAt: f.clock.now(),
    });
    expect(
      expectShape(await f.send('POST', '/v1/policies', op, body), 200, answers.PolicySchema),
    ).toEqual(created);
    const conflict = await f.send('POST', '/v1/policies', op, { version: 'v1', digest: 'other' });
    expectError(conflict, 'policy_conflict');
    expect(errorOf(conflict).details).toEqual({ version: 'v1', digest: 'sha256:aa' });
    expect((await f.send('POST', '/v1/policies', op, { version: 'v2' })).statusCode).toBe(201);

    const list = expectShape(
      await f.send('GET', '/v1/policies', op),
      200,
      answers.PolicyListSchema,
    ) as { items: Policy[] };
    expect(list.items.map((policy) => policy.version)).toEqual(['v1', 'v2']);
    // Another tenant sees none of them.
    expect((await f.send('GET', '/v1/policies', f.tokens.operatorB)).json()).toEqual({
      items: [],
    });

    for (const bad of [{ version: 'v 1' }, { version: 'v3', digest: 5 }, { version: 'v3', x: 1 }]) {
      const response = await f.send('POST', '/v1/policies', op, bad);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toBe(libraryMessage(() => validatePolicy(bad)));
    }
  });
});

describe('cutovers (operator) and job events (worker)', () => {
  it('moves scopes once per cutoverId and reports the drain from the jobs ledger and the audit log', async () => {
    const f = (fx = await serverFixture());
    const op = f.tokens.operatorA;
    const worker = f.tokens.workerA;
    await f.send('POST', '/v1/policies', op, { version: 'v1' });
    await f.send('POST', '/v1/policies', op, { version: 'v2' });
    for (const scope of ['s-1', 's-2']) {
      const grant = await f.send('POST', '/v1/leases/acquire', worker, {
        scope,
        holder: 'v7-worker',
        ttlMs: 60_000,
        policyVersion: 'v1',
      });
      expect(grant.statusCode).toBe(200);
    }
    const events = await f.send('POST', '/v1/jobs/events', worker, {
      events: [
        {
          jobId: 'job-1',
          scope: 's-1',
          policyVersion: 'v1',
          fence: 1,
          state: 'running',
          attempt: 1,
        },
        {
          jobId: 'job-2',
          scope: 's-2',
          policyVersion: 'v1',
          fence: 1,
          state: 'queued',
          attempt: 0,
          at: f.clock.now(),
        },
      ],
    });
    expect(expectShape(events, 202, answers.JobEventsAcceptedSchema)).toEqual({ accepted: 2 });

    const request = {
      cutoverId: 'co-1',
      toPolicy: 'v2',
      holder: 'v8-controller',
      prefix: 's-',
      reason: 'policy v2',
    };
    const result = expectShape(
      await f.send('POST', '/v1/cutovers', op, request),
      200,
      answers.CutoverResultSchema,
    ) as CutoverResult;
    expect(result).toEqual({
      cutoverId: 'co-1',
      toPolicy: 'v2',
      scopes: 2,
      fences: [
        { scope: 's-1', fence: 2 },
        { scope: 's-2', fence: 2 },
      ],
      skipped: [],
    });
    // The same cutover again moves nothing twice.
    expect((await f.send('POST', '/v1/cutovers', op, request)).json()).toEqual(result);
    expect((await f.send('GET', '/v1/scopes/s-1', worker)).json()).toMatchObject({
      fence: 2,
      holder: 'v8-controller',
      policyVersion: 'v2',
    });
    const conflict = await f.send('POST', '/v1/cutovers', op, { ...request, holder: 'someone' });
    expectError(conflict, 'operation_id_conflict');
    const unregistered = await f.send('POST', '/v1/cutovers', op, {
      toPolicy: 'v9',
      holder: 'c',
      scopes: ['s-1'],
    });
    expectError(unregistered, 'invalid_request');
    expect(errorOf(unregistered).message).toContain('v9');
    expect((await f.send('GET', '/v1/scopes/s-1', worker)).json()).toMatchObject({ fence: 2 });

    // A stale worker of the old generation tries to commit after the cutover.
    const stale = await f.send('POST', '/v1/commit', worker, {
      scope: 's-1',
      fence: 1,
      operationId: 'op-stale',
      policyVersion: 'v1',
      writes: [{ name: 'doc', expectRevision: 0, value: 'stale' }],
    });
    expect(stale.statusCode).toBe(409);
    await f.send('POST', '/v1/jobs/events', worker, {
      events: [
        {
          jobId: 'job-1',
          scope: 's-1',
          policyVersion: 'v1',
          fence: 1,
          state: 'failed',
          attempt: 1,
        },
      ],
    });

    const report = expectShape(
      await f.send('GET', '/v1/cutovers/co-1/report', op),
      200,
      answers.CutoverReportSchema,
    ) as CutoverReport;
    expect(report).toMatchObject({
      cutoverId: 'co-1',
      toPolicy: 'v2',
      holder: 'v8-controller',
      status: 'completed',
      scopes: 2,
      oldJobs: { total: 2, byState: { failed: 1, queued: 1, running: 0 } },
      staleAttempts: 1,
      staleAccepted: 0,
      staleRejectedByReason: { stale_fence: 1 },
      liveCommits: 0,
    });
    expectError(await f.send('GET', '/v1/cutovers/co-404/report', op), 'not_found');
  });

  it('generates a cutoverId when none is sent', async () => {
    const f = (fx = await serverFixture());
    const op = f.tokens.operatorA;
    await f.send('POST', '/v1/policies', op, { version: 'v2' });
    await f.send('POST', `/v1/scopes/s-1/takeover`, op, { holder: 'x' });
    const result = (
      await f.send('POST', '/v1/cutovers', op, { toPolicy: 'v2', holder: 'c', scopes: ['s-1'] })
    ).json<CutoverResult>();
    expect(result.cutoverId).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      (await f.send('GET', `/v1/cutovers/${result.cutoverId}/report`, op)).json(),
    ).toMatchObject({ cutoverId: result.cutoverId, scopes: 1 });
  });

  it('refuses malformed cutovers and job events with the library message', async () => {
    const f = (fx = await serverFixture());
    const cutovers: unknown[] = [
      { toPolicy: 'v2', holder: 'c' },
      { toPolicy: 'v2', holder: 'c', scopes: ['s-1'], prefix: 's-' },
      { toPolicy: 'v2', holder: 'c', scopes: [] },
      { toPolicy: 'v2', holder: 'c', scopes: ['bad scope'] },
      { toPolicy: 'v2', holder: 'c', prefix: 's-', leaseTtlMs: 10 },
      { toPolicy: 'v2', holder: 'c', prefix: 's-', cutoverId: '..' },
      { toPolicy: 'v2', prefix: 's-' },
    ];
    for (const body of cutovers) {
      const response = await f.send('POST', '/v1/cutovers', f.tokens.operatorA, body);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toBe(
        libraryMessage(() => validateCutover(body, DEFAULT_LIMITS)),
      );
    }
    const event = { jobId: 'j', scope: 's', policyVersion: 'v1', fence: 1, state: 'queued' };
    const jobs: unknown[] = [
      { events: [] },
      { events: [{ ...event, attempt: 0, state: 'done' }] },
      { events: [{ ...event }] },
      { events: [{ ...event, attempt: 0, at: -5 }] },
      { events: [{ ...event, attempt: 0, extra: true }] },
      { event: [] },
    ];
    for (const body of jobs) {
      const response = await f.send('POST', '/v1/jobs/events', f.tokens.workerA, body);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toBe(libraryMessage(() => validateJobEvents(body)));
    }
  });
});

describe('roles', () => {
  it('lets workers claim, complete and send job events, and keeps them out of policies, cutovers and verify', async () => {
    const f = (fx = await serverFixture());
    const worker = f.tokens.workerA;
    expect(
      (await f.send('POST', '/v1/intents/claim', worker, { dispatcher: 'd', ttlMs: 100, limit: 1 }))
        .statusCode,
    ).toBe(200);
    expectError(
      await f.send('POST', '/v1/intents/fx/complete', worker, {
        claimFence: 1,
        outcome: 'delivered',
      }),
      'not_found',
    );
    expect(
      (
        await f.send('POST', '/v1/jobs/events', worker, {
          events: [
            { jobId: 'j', scope: 's', policyVersion: 'v1', fence: 1, state: 'queued', attempt: 0 },
          ],
        })
      ).statusCode,
    ).toBe(202);
    const operatorOnly: [method: 'GET' | 'POST', url: string, body?: unknown][] = [
      ['POST', '/v1/policies', { version: 'v1' }],
      ['GET', '/v1/policies'],
      ['POST', '/v1/cutovers', { toPolicy: 'v1', holder: 'c', prefix: 's' }],
      ['GET', '/v1/cutovers/co-1/report'],
      ['GET', '/v1/verify'],
    ];
    for (const [method, url, body] of operatorOnly) {
      expectError(await f.send(method, url, worker, body), 'forbidden');
      expect((await f.send(method, url, f.tokens.operatorA, body)).statusCode).not.toBe(403);
      expectError(await f.send(method, url, null, body), 'unauthorized');
    }
    expect((await f.send('GET', '/v1/policies', f.tokens.operatorA)).json()).toEqual({
      items: [
        {
          version: 'v1',
          digest: null,
          description: null,
          registeredBy: await tokenIdOf(f, f.tokens.operatorA),
          registeredAt: f.clock.now(),
        },
      ],
    });
  });
});

describe('verify and its gauge', () => {
  it('answers a clean history with ok, the entries checked and no violation; the gauge says 0', async () => {
    const f = (fx = await serverFixture());
    await commitIntents(f, [['fx-1', 'crm']]);
    const report = expectShape(
      await f.send('GET', '/v1/verify', f.tokens.operatorA),
      200,
      answers.VerifyReportSchema,
    );
    // acquire, commit, and the intent's creation.
    expect(report).toEqual({ ok: true, checked: 3, violations: [] });
    expect((await f.send('GET', '/v1/verify', f.tokens.operatorB)).json()).toEqual({
      ok: true,
      checked: 0,
      violations: [],
    });
    const metrics = (await f.send('GET', '/metrics', null)).body;
    expect(metrics).toMatch(/^fencegate_verify_violations 0$/m);
  });

  it('reports a stale commit written as accepted into the audit log, to its tenant only', async () => {
    const dir = tempDir('fencegate-verify-http-');
    const path = join(dir.path, 'store.db');
    // The background verifier must not read the stale entry before it is tampered with below:
    // it refreshes at start, then only after this long (the scrape at the end waits for it).
    const f = await serverFixture({ path, storeGauges: { intervalMs: 3_000 } });
    try {
      await commitIntents(f, [['fx-1', 'crm']]);
      const stale = await f.send('POST', '/v1/commit', f.tokens.workerA, {
        scope: SCOPE,
        fence: 0,
        operationId: 'op-stale',
      });
      expect(stale.statusCode).toBe(409);
      // A store that skipped the fence check would have written this: the rejection as accepted.
      const db = new Database(path);
      db.prepare(
        `UPDATE audit SET outcome = 'committed', reason = NULL WHERE operation_id = 'op-stale'`,
      ).run();
      db.close();

      const report = expectShape(
        await f.send('GET', '/v1/verify', f.tokens.operatorA),
        200,
        answers.VerifyReportSchema,
      );
      expect(report).toMatchObject({
        ok: false,
        checked: 4,
        violations: [
          {
            tenant: 'tenant-a',
            scope: SCOPE,
            kind: 'stale_commit_accepted',
            expected: 1,
            found: 0,
          },
        ],
      });
      expect((await f.send('GET', '/v1/verify', f.tokens.operatorB)).json()).toMatchObject({
        ok: true,
      });
      // The gauge is refreshed in the background: the scrape shows it once a refresh ran.
      let metrics = '';
      while (!/^fencegate_verify_violations 1$/m.test(metrics)) {
        metrics = (await f.send('GET', '/metrics', null)).body;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(metrics).not.toContain('tenant-a');
    } finally {
      await f.close();
      dir.cleanup();
    }
  });
});
