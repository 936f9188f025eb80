/**
 * The HTTP API against HTTP-API.md: answers match their schemas, errors are the one error body with
 * the documented status, the OpenAPI document covers every route, metrics and health work, and an
 * unexpected fault is a 500 without internals. Every test ends with a verify of the audit history.
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, FencegateError } from '../../src/errors.js';
import * as answers from '../../src/server/schemas/answers.js';
import { ErrorBody } from '../../src/server/schemas/common.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import {
  capturedLogger,
  errorOf,
  expectHistoryValid,
  serverFixture,
  type ServerFixture,
} from './fixture.js';

const SCOPE = 'wf-1/memory';
const PATH = `/v1/scopes/${encodeURIComponent(SCOPE)}`;

function expectShape(response: LightMyRequestResponse, status: number, schema: TSchema): unknown {
  expect({ status: response.statusCode, body: response.body.slice(0, 500) }).toMatchObject({
    status,
  });
  const body = response.json<unknown>();
  const checker = TypeCompiler.Compile(schema);
  expect([...checker.Errors(body)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  return body;
}

function expectError(response: LightMyRequestResponse, code: keyof typeof ERROR_CATALOG): void {
  expectShape(response, ERROR_CATALOG[code].httpStatus, ErrorBody);
  expect(errorOf(response).code).toBe(code);
}

let fx: ServerFixture;
afterEach(async () => {
  try {
    // Whatever a test sent, the store's history must still prove every invariant.
    await expectHistoryValid(fx);
  } finally {
    await fx.close();
  }
});

describe('the API end to end through the HTTP stack', () => {
  it('serves the lease, record, commit, intent and audit endpoints with the documented shapes', async () => {
    fx = await serverFixture();
    const { operatorA: op, workerA: worker } = fx.tokens;
    const grant = expectShape(
      await fx.send('POST', '/v1/leases/acquire', worker, {
        scope: SCOPE,
        holder: 'w1',
        ttlMs: 1_000,
      }),
      200,
      answers.GrantSchema,
    ) as { fence: number };
    expect(grant.fence).toBe(1);
    expectError(
      await fx.send('POST', '/v1/leases/acquire', worker, {
        scope: SCOPE,
        holder: 'w2',
        ttlMs: 1_000,
      }),
      'lease_held',
    );
    expectShape(
      await fx.send('POST', '/v1/leases/renew', worker, {
        scope: SCOPE,
        holder: 'w1',
        fence: 1,
        ttlMs: 2_000,
      }),
      200,
      answers.GrantSchema,
    );
    expectShape(await fx.send('GET', PATH, worker), 200, answers.ScopeSchema);
    expectShape(
      await fx.send('GET', '/v1/scopes?prefix=wf-&limit=10', worker),
      200,
      answers.ScopePageSchema,
    );
    const empty = expectShape(
      await fx.send('GET', `${PATH}/records/summary`, worker),
      200,
      answers.RecordSchema,
    );
    expect(empty).toMatchObject({ exists: false, revision: 0 });

    const commit = {
      scope: SCOPE,
      fence: 1,
      operationId: 'op-1',
      writes: [{ name: 'summary', expectRevision: 0, value: { text: 'hello' } }],
      intents: [{ effectKey: 'notify-1', target: 'crm', payload: { to: 'x' } }],
    };
    const committed = expectShape(
      await fx.send('POST', '/v1/commit', worker, commit),
      200,
      answers.CommitCommittedSchema,
    );
    expect(committed).toMatchObject({ outcome: 'committed', replayed: false });
    expect(
      expectShape(
        await fx.send('POST', '/v1/commit', worker, commit),
        200,
        answers.CommitCommittedSchema,
      ),
    ).toMatchObject({ replayed: true });
    expect(
      expectShape(
        await fx.send('GET', '/v1/operations/op-1', worker),
        200,
        answers.CommitCommittedSchema,
      ),
    ).toEqual(committed);
    expectError(await fx.send('GET', '/v1/operations/op-unknown', worker), 'not_found');
    expectError(
      await fx.send('POST', '/v1/commit', worker, { ...commit, writes: [] }),
      'operation_id_conflict',
    );

    const rejected = expectShape(
      await fx.send('POST', '/v1/commit', worker, {
        scope: SCOPE,
        fence: 1,
        operationId: 'op-2',
        writes: [{ name: 'summary', expectRevision: 0, value: 'stale' }],
      }),
      409,
      answers.CommitRejectedSchema,
    );
    expect(rejected).toMatchObject({
      outcome: 'rejected',
      error: { code: 'stale_revision', details: { name: 'summary', expected: 0, actual: 1 } },
    });
    // A rejection of a never-created scope is a 409 rejection too, not a 404.
    expect(
      expectShape(
        await fx.send('POST', '/v1/commit', worker, {
          scope: 'nope',
          fence: 1,
          operationId: 'op-3',
        }),
        409,
        answers.CommitRejectedSchema,
      ),
    ).toMatchObject({ error: { code: 'scope_not_found' } });

    expectShape(await fx.send('GET', `${PATH}/records/summary`, worker), 200, answers.RecordSchema);
    expectShape(await fx.send('GET', `${PATH}/records`, worker), 200, answers.RecordListSchema);
    expectShape(
      await fx.send('GET', '/v1/intents?status=pending', worker),
      200,
      answers.IntentPageSchema,
    );
    expectShape(await fx.send('GET', '/v1/intents/notify-1', worker), 200, answers.IntentSchema);
    expectError(await fx.send('GET', '/v1/intents/notify-404', worker), 'not_found');
    const audit = expectShape(
      await fx.send('GET', '/v1/audit?kind=commit', op),
      200,
      answers.AuditPageSchema,
    );
    expect((audit as { items: unknown[] }).items.length).toBeGreaterThanOrEqual(3);

    const taken = expectShape(
      await fx.send('POST', `${PATH}/takeover`, op, {
        holder: 'op',
        ttlMs: 5_000,
        reason: 'stuck',
      }),
      200,
      answers.GrantSchema,
    );
    expect(taken).toMatchObject({ fence: 2, holder: 'op' });
    expectError(
      await fx.send('POST', '/v1/leases/release', worker, { scope: SCOPE, holder: 'w1', fence: 1 }),
      'stale_fence',
    );
    expectShape(
      await fx.send('POST', '/v1/leases/release', op, { scope: SCOPE, holder: 'op', fence: 2 }),
      200,
      answers.ReleaseResultSchema,
    );
    expect(
      expectShape(await fx.send('POST', `${PATH}/cancel`, op), 200, answers.CancelResultSchema),
    ).toMatchObject({ fence: 3, cancelledIntents: 1 });
    expect(
      expectShape(
        await fx.send('DELETE', PATH, op, { reason: 'done' }),
        200,
        answers.DeleteScopeResultSchema,
      ),
    ).toMatchObject({ fence: 4 });
    expectError(await fx.send('DELETE', PATH, op), 'scope_deleted');
    expectError(await fx.send('GET', '/v1/scopes/never-created', worker), 'scope_not_found');
  });

  it('moves the store clock only through the test clock route, and only for the admin', async () => {
    fx = await serverFixture();
    const before = fx.clock.now();
    const answer = await fx.send('POST', '/v1/test/clock', fx.tokens.operatorA, { advanceMs: 5 });
    expectError(answer, 'forbidden');
    const moved = await fx.send('POST', '/v1/test/clock', 'admin-token-for-tests-0123456789', {
      advanceMs: 5,
    });
    expect(expectShape(moved, 200, answers.ClockSchema)).toEqual({ now: before + 5 });
  });
});

describe('error mapping', () => {
  it('answers malformed bodies with documented codes and field-naming messages', async () => {
    fx = await serverFixture();
    const worker = fx.tokens.workerA;
    const acquire = '/v1/leases/acquire';
    const cases: [
      unknown,
      Record<string, string> | undefined,
      keyof typeof ERROR_CATALOG,
      RegExp,
    ][] = [
      ['{"scope":', undefined, 'invalid_request', /^the body is not valid JSON: .*position 9/],
      // A syntax error says where, and nothing of prototype keys it has nothing to do with.
      ['{"scope":}', undefined, 'invalid_request', /^(?!.*__proto__).*at position 9/],
      ['', undefined, 'invalid_request', /empty/],
      [
        '{"scope":"a","holder":"b","ttlMs":1000}',
        { 'content-type': 'text/plain' },
        'unsupported_media_type',
        /application\/json/,
      ],
      [
        '{"__proto__":{"x":1},"scope":"a","holder":"b","ttlMs":1000}',
        undefined,
        'invalid_request',
        /__proto__/,
      ],
      [
        { scope: 'a', holder: 'b', ttlMs: 1000, extra: 1 },
        undefined,
        'invalid_request',
        /extra is not a known field; allowed: scope, holder, ttlMs, policyVersion/,
      ],
      [
        { scope: 'a b', holder: 'b', ttlMs: 1000 },
        undefined,
        'invalid_request',
        /^scope must be 1 to 256 characters/,
      ],
      [
        { scope: 'a', holder: 'b', ttlMs: 99 },
        undefined,
        'invalid_request',
        /^ttlMs must be an integer from 100 to 86400000$/,
      ],
      [
        { scope: 'a', holder: 'b', ttlMs: '1000' },
        undefined,
        'invalid_request',
        /^ttlMs must be an integer/,
      ],
      [{ scope: 'a', ttlMs: 1000 }, undefined, 'invalid_request', /^holder must be/],
      [[1, 2], undefined, 'invalid_request', /^body must be a JSON object$/],
      ['null', undefined, 'invalid_request', /^body must be a JSON object$/],
    ];
    for (const [body, headers, code, message] of cases) {
      const response = await fx.send('POST', acquire, worker, body, headers);
      expectError(response, code);
      expect(errorOf(response).message).toMatch(message);
    }
    expect(await fx.store.listScopes('tenant-a', {})).toEqual({ items: [], nextCursor: null });
  });

  it('answers a wrong method 405 naming the right one, and an unencoded / in a name with %2F', async () => {
    fx = await serverFixture();
    const worker = fx.tokens.workerA;
    const wrong = await fx.send('GET', '/v1/leases/acquire', worker);
    expectError(wrong, 'method_not_allowed');
    expect(wrong.statusCode).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(errorOf(wrong).message).toBe('GET /v1/leases/acquire is not a route; use POST');

    const slash = await fx.send('GET', '/v1/scopes/wf-1/memory/records/summary', worker);
    expectError(slash, 'not_found');
    expect(errorOf(slash).message).toContain('encode a / in a scope or record name as %2F');
    expect(errorOf(slash).message).toContain('/v1/scopes/wf-1%2Fmemory/records/summary');
  });

  it('refuses a body over 1 MiB with 413 and a value over 256 KiB with 413', async () => {
    fx = await serverFixture();
    const worker = fx.tokens.workerA;
    const huge = JSON.stringify({
      scope: 'a',
      holder: 'b',
      ttlMs: 1000,
      pad: 'x'.repeat(1024 * 1024),
    });
    expectError(await fx.send('POST', '/v1/leases/acquire', worker, huge), 'payload_too_large');
    await fx.send('POST', '/v1/leases/acquire', worker, {
      scope: SCOPE,
      holder: 'w1',
      ttlMs: 1_000,
    });
    const value = await fx.send('POST', '/v1/commit', worker, {
      scope: SCOPE,
      fence: 1,
      operationId: 'op-big',
      writes: [{ name: 'doc', expectRevision: 0, value: 'x'.repeat(256 * 1024) }],
    });
    expectError(value, 'payload_too_large');
    expect(errorOf(value).details).toMatchObject({ field: 'writes[0].value', limit: 256 * 1024 });
  });

  it('names query and path fields, and refuses unknown query parameters', async () => {
    fx = await serverFixture();
    const worker = fx.tokens.workerA;
    const cases: [string, RegExp][] = [
      ['/v1/scopes?limit=0', /^limit must be an integer from 1 to 1000$/],
      ['/v1/scopes?limit=1e3', /^limit must be an integer/],
      ['/v1/scopes?limit=5&limit=6', /^limit must be an integer/],
      ['/v1/scopes?order=desc', /order is not a known field; allowed: prefix, limit, cursor/],
      ['/v1/intents?status=done', /^status must be one of pending, claimed/],
      ['/v1/scopes/a%20b', /^scope must be 1 to 256 characters/],
      [`/v1/scopes/${'s'.repeat(257)}`, /^scope must be/],
      ['/v1/scopes/ok/records/bad%20name', /^name must be/],
      ['/v1/scopes/%E0%A4%A', /percent-encoded/],
    ];
    for (const [url, message] of cases) {
      const response = await fx.send('GET', url, worker);
      expectError(response, 'invalid_request');
      expect(errorOf(response).message).toMatch(message);
    }
    const audit = await fx.send('GET', '/v1/audit?afterSeq=-1', fx.tokens.operatorA);
    expectError(audit, 'invalid_request');
    expectError(await fx.send('GET', '/v1/nothing-here', worker), 'not_found');
    expectError(await fx.send('POST', '/v1/scopes', worker, {}), 'method_not_allowed');
  });

  it('answers an unexpected fault with 500 internal_error, a request id and no internals', async () => {
    const { logger, lines } = capturedLogger('info');
    fx = await serverFixture({
      logger,
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key === 'getScope') {
              return () => Promise.reject(new Error('disk exploded at /var/secret/path'));
            }
            const value = Reflect.get(target, key, receiver) as unknown;
            return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
          },
        }),
    });
    const response = await fx.send('GET', PATH, fx.tokens.workerA);
    expectError(response, 'internal_error');
    const error = errorOf(response);
    expect(response.body).not.toContain('secret');
    expect(error.details).toEqual({ requestId: response.headers['x-request-id'] });
    const logged = lines.join('');
    expect(logged).toContain('disk exploded');
    expect(logged).toContain(String(response.headers['x-request-id']));
  });

  it('answers an internal_error a store raises with the request id in its details, and logs it', async () => {
    const { logger, lines } = capturedLogger('info');
    fx = await serverFixture({
      logger,
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, key, receiver) {
            if (key === 'getScope') {
              return () =>
                Promise.reject(new FencegateError('internal_error', 'a statement failed', {}));
            }
            const value = Reflect.get(target, key, receiver) as unknown;
            return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
          },
        }),
    });
    const response = await fx.send('GET', PATH, fx.tokens.workerA);
    expectError(response, 'internal_error');
    expect(errorOf(response).details).toEqual({ requestId: response.headers['x-request-id'] });
    const logged = lines.join('');
    expect(logged).toContain('a statement failed');
    expect(logged).toContain(String(response.headers['x-request-id']));
  });

  it('logs neither tokens nor values', async () => {
    const { logger, lines } = capturedLogger('trace');
    fx = await serverFixture({ logger });
    const worker = fx.tokens.workerA;
    await fx.send('POST', '/v1/leases/acquire', worker, {
      scope: SCOPE,
      holder: 'w1',
      ttlMs: 1_000,
    });
    await fx.send('POST', '/v1/commit', worker, {
      scope: SCOPE,
      fence: 1,
      operationId: 'op-1',
      writes: [{ name: 'doc', expectRevision: 0, value: 'TOP-SECRET-VALUE' }],
      intents: [{ effectKey: 'fx', target: 'crm', payload: 'SECRET-PAYLOAD' }],
    });
    await fx.send('GET', `${PATH}/records/doc`, worker);
    await fx.send('GET', '/v1/scopes', 'fg_not-a-real-token');
    const logged = lines.join('');
    expect(logged).toContain('"route":"/v1/commit"');
    for (const secret of [worker, 'fg_not-a-real-token', 'TOP-SECRET-VALUE', 'SECRET-PAYLOAD']) {
      expect(logged).not.toContain(secret);
    }
  });
});

describe('operations endpoints', () => {
  it('answers /healthz, and /readyz 503 store_unavailable when the store is down', async () => {
    let faulty: ReturnType<typeof faultyStore> | undefined;
    fx = await serverFixture({
      wrapStore: (store) => (faulty = faultyStore(store)),
    });
    expectShape(await fx.send('GET', '/healthz', null), 200, answers.HealthSchema);
    expectShape(await fx.send('GET', '/readyz', null), 200, answers.HealthSchema);
    faulty?.setUnavailable(true);
    expectError(await fx.send('GET', '/readyz', null), 'store_unavailable');
    expect((await fx.send('GET', '/healthz', null)).statusCode).toBe(200);
    faulty?.setUnavailable(false);
    expect((await fx.send('GET', '/readyz', null)).statusCode).toBe(200);
  });

  it('exports commits by outcome and reason, stale attempts, lease operations and latency', async () => {
    fx = await serverFixture();
    const worker = fx.tokens.workerA;
    await fx.send('POST', '/v1/leases/acquire', worker, {
      scope: SCOPE,
      holder: 'w1',
      ttlMs: 1_000,
    });
    await fx.send('POST', '/v1/leases/acquire', worker, {
      scope: SCOPE,
      holder: 'w2',
      ttlMs: 1_000,
    });
    await fx.send('POST', '/v1/commit', worker, { scope: SCOPE, fence: 1, operationId: 'op-1' });
    await fx.send('POST', '/v1/commit', worker, { scope: SCOPE, fence: 0, operationId: 'op-2' });
    // A stale commit retried under its operationId is one stale attempt.
    await fx.send('POST', '/v1/commit', worker, { scope: SCOPE, fence: 0, operationId: 'op-2' });
    const cancelIntents = { scope: SCOPE, holder: 'w1', fence: 1, committedFrom: 0 };
    await fx.send('POST', '/v1/leases/cancel-intents', worker, cancelIntents);
    await fx.send('POST', '/v1/leases/cancel-intents', worker, { ...cancelIntents, fence: 0 });
    const response = await fx.send('GET', '/metrics', null);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.body;
    expect(text).toContain('fencegate_commits_total{outcome="committed",reason="none"} 1');
    expect(text).toContain('fencegate_commits_total{outcome="rejected",reason="stale_fence"} 1');
    expect(text).toContain(
      'fencegate_stale_attempts_total{operation="commit",reason="stale_fence"} 1',
    );
    expect(text).toContain('fencegate_lease_operations_total{operation="acquire",outcome="ok"} 1');
    expect(text).toContain(
      'fencegate_lease_operations_total{operation="acquire",outcome="lease_held"} 1',
    );
    expect(text).toContain(
      'fencegate_lease_operations_total{operation="cancel_intents",outcome="ok"} 1',
    );
    expect(text).toContain(
      'fencegate_lease_operations_total{operation="cancel_intents",outcome="stale_fence"} 1',
    );
    expect(text).toMatch(
      /fencegate_http_request_duration_seconds_count\{method="POST",route="\/v1\/commit",status="200"\} 1/,
    );
    expect(text).not.toContain('tenant-a');
  });

  it('publishes an OpenAPI 3.1 document with every route, its schemas and its error codes', async () => {
    fx = await serverFixture();
    const doc = fx.app.printRoutes({ commonPrefix: false });
    const response = await fx.send('GET', '/openapi.json', null);
    expect(response.statusCode).toBe(200);
    const openapi = response.json<{
      openapi: string;
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>
      >;
      components: { schemas: Record<string, unknown> };
    }>();
    expect(openapi.openapi).toBe('3.1.0');
    const expected = [
      'post /v1/leases/acquire',
      'post /v1/leases/renew',
      'post /v1/leases/release',
      'post /v1/leases/cancel-intents',
      'get /v1/scopes',
      'get /v1/scopes/{scope}',
      'post /v1/scopes/{scope}/takeover',
      'post /v1/scopes/{scope}/cancel',
      'delete /v1/scopes/{scope}',
      'get /v1/scopes/{scope}/records',
      'get /v1/scopes/{scope}/records/{name}',
      'post /v1/scopes/{scope}/reads',
      'post /v1/commit',
      'post /v1/commits',
      'get /v1/operations/{operationId}',
      'post /v1/operations/{operationId}/abandon',
      'get /v1/intents',
      'get /v1/intents/{effectKey}',
      'post /v1/intents/claim',
      'post /v1/intents/{effectKey}/complete',
      'post /v1/policies',
      'get /v1/policies',
      'post /v1/cutovers',
      'get /v1/cutovers/{cutoverId}/report',
      'get /v1/cutovers',
      'post /v1/rollouts',
      'get /v1/rollouts',
      'get /v1/rollouts/{rolloutId}',
      'post /v1/rollouts/{rolloutId}/advance',
      'post /v1/rollouts/{rolloutId}/pause',
      'post /v1/rollouts/{rolloutId}/resume',
      'post /v1/rollouts/{rolloutId}/promote',
      'post /v1/rollouts/{rolloutId}/rollback',
      'get /v1/rollouts/{rolloutId}/report',
      'post /v1/jobs/events',
      'get /v1/audit',
      'get /v1/verify',
      'post /v1/admin/tokens',
      'get /v1/admin/tokens',
      'delete /v1/admin/tokens/{id}',
      'get /healthz',
      'get /readyz',
      'get /metrics',
      'get /openapi.json',
    ];
    const documented = Object.entries(openapi.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(documented.sort()).toEqual([...expected].sort());
    // Registered, under the dashboard's GET / in Fastify's route tree, but never documented.
    expect(doc).toContain('v1/test/clock');
    expect(documented.some((entry) => entry.includes('/v1/test'))).toBe(false);
    const commit = openapi.paths['/v1/commit']?.post;
    expect(Object.keys(commit?.responses ?? {}).sort()).toEqual(
      ['200', '400', '401', '403', '409', '413', '415', '422', '500', '503'].sort(),
    );
    // Every reference resolves.
    const refs =
      JSON.stringify(openapi).match(/"\$ref":"#\/components\/schemas\/([A-Za-z]+)"/g) ?? [];
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      const name = /schemas\/([A-Za-z]+)/.exec(ref)?.[1] ?? '';
      expect(openapi.components.schemas[name], name).toBeDefined();
    }
  });
});
