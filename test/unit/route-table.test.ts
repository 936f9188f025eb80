/**
 * The route table against what is built from it: the server's routes, the OpenAPI document, the
 * client's paths, the JSON export; and the lease-lost code sets against the rules that answer
 * them.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { resendKind, routeRequest } from '../../src/client/route-request.js';
import { checkCommit } from '../../src/core/commit-check.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { decideRenew, type GrantedScope } from '../../src/core/lease-rules.js';
import type { NormalizedCommit } from '../../src/core/validate.js';
import {
  COMMIT_AUTHORITY_LOST_CODES,
  COMMIT_REJECTION_CODES,
  RENEWAL_LEASE_LOST_CODES,
} from '../../src/errors.js';
import {
  RETRY_CLASSES,
  ROUTE_NAMES,
  ROUTE_TABLE,
  routePath,
  routeTableJson,
} from '../../src/route-table.js';
import { buildOpenApiDocument } from '../../src/server/openapi.js';
import type { AnyRoute, RouteFile } from '../../src/server/route.js';
import { ROUTE_FILES } from '../../src/server/routes/index.js';
import { testClockRoutes } from '../../src/server/routes/test-clock.js';
import { requestSchemas } from '../../src/server/schemas/requests.js';
import { ManualClock } from '../../src/testing/manual-clock.js';

const schemas = requestSchemas(DEFAULT_LIMITS);
const files: readonly RouteFile[] = ROUTE_FILES;
const served: AnyRoute[] = files.flatMap((file) => file(schemas, DEFAULT_LIMITS));

describe('the route table', () => {
  it('has one server route per entry, with its method, path and auth', () => {
    const names = served.map((spec) => spec.name);
    expect([...names].sort()).toEqual([...ROUTE_NAMES].sort());
    for (const spec of served) {
      const entry = ROUTE_TABLE[spec.name!];
      expect(
        { method: spec.method, url: spec.url, auth: spec.auth, retry: spec.retry },
        spec.name!,
      ).toEqual({ method: entry.method, url: entry.path, auth: entry.auth, retry: entry.retry });
      expect(spec.takeOverRight, spec.name!).toBe('takeOverRight' in entry);
    }
  });

  it('gives no two entries the same method and path, and only known retry classes', () => {
    const keys = ROUTE_NAMES.map((name) => `${ROUTE_TABLE[name].method} ${ROUTE_TABLE[name].path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const name of ROUTE_NAMES) expect(RETRY_CLASSES).toContain(ROUTE_TABLE[name].retry);
  });

  it('leaves test-only routes out of the table and the OpenAPI document', () => {
    const testOnly = testClockRoutes(new ManualClock(0))(schemas, DEFAULT_LIMITS);
    expect(testOnly.map((spec) => [spec.name, spec.retry])).toEqual([[null, null]]);
    const document = buildOpenApiDocument([...served, ...testOnly], '0.0.0') as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths)).not.toContain('/v1/test/clock');
  });

  it('is what the OpenAPI document says of each operation: role and retry class', () => {
    const document = buildOpenApiDocument(served, '0.0.0') as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path: path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'),
        auth: operation['x-fencegate-role'],
        retry: operation['x-fencegate-retry'],
      })),
    );
    const table = ROUTE_NAMES.map((name) => {
      const { method, path, auth, retry } = ROUTE_TABLE[name];
      return { method, path, auth, retry };
    });
    const byKey = (a: { method: string; path: string }, b: { method: string; path: string }) =>
      `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`);
    expect(documented.sort(byKey)).toEqual(table.sort(byKey));
  });

  it('fills each path value percent-encoded, so a slash stays inside its segment', () => {
    expect(routePath('getRecord', { scope: 'wf 1/memory', name: 'a?b#c' })).toBe(
      '/v1/scopes/wf%201%2Fmemory/records/a%3Fb%23c',
    );
    expect(routePath('listScopes', {})).toBe('/v1/scopes');
    // @ts-expect-error a route's path values are checked at compile time
    expect(() => routePath('getRecord', { scope: 's' })).toThrow(/needs the path value name/);
    // @ts-expect-error a route that is not in the table does not compile
    expect(() => routePath('getScopes', {})).toThrow();
  });

  it('gives the client its method, path, query and resend rule from the entry', () => {
    expect(routeRequest('getScope', { params: { scope: 'wf-1/memory' } })).toEqual({
      method: 'GET',
      path: '/v1/scopes/wf-1%2Fmemory',
      kind: 'read',
      body: undefined,
    });
    expect(routeRequest('listTokens', { query: { tenant: 'a b', cursor: undefined } }).path).toBe(
      '/v1/admin/tokens?tenant=a+b',
    );
    expect(routeRequest('takeover', { params: { scope: 's' }, body: {} }).kind).toBe('write');
    expect(() => routeRequest('getIntent', { params: { effectKey: '..' } })).toThrow(
      /effectKey must be 1 to 256 characters/,
    );
    expect(resendKind('idempotent-when-timed', true)).toBe('idempotent');
    expect(resendKind('idempotent-when-timed', false)).toBe('write');
    for (const retry of ['commit', 'lease', 'none'] as const) {
      expect(resendKind(retry, true)).toBe('write');
    }
  });

  it('is exported as JSON, with each path value named', () => {
    const json = routeTableJson();
    expect(json.routes.map((entry) => entry.name)).toEqual(ROUTE_NAMES);
    expect(json.routes.find((entry) => entry.name === 'getRecord')).toEqual({
      name: 'getRecord',
      method: 'GET',
      path: '/v1/scopes/:scope/records/:name',
      auth: 'worker',
      retry: 'read',
      params: ['scope', 'name'],
    });
    const printed = execFileSync(
      process.execPath,
      ['--import', 'tsx', new URL('../../scripts/route-table-json.ts', import.meta.url).pathname],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(printed)).toEqual({
      ...json,
      retryClasses: [...RETRY_CLASSES],
      leaseLostCodes: {
        renewal: [...RENEWAL_LEASE_LOST_CODES],
        commit: [...COMMIT_AUTHORITY_LOST_CODES],
      },
    });
  });
});

describe('the lease-lost codes', () => {
  const at = 1_000;
  const holder = 'worker-1';
  const scope = (change: Partial<GrantedScope>): GrantedScope => ({
    fence: 3,
    holder,
    leaseExpiresAt: at + 10_000,
    policyVersion: null,
    status: 'active',
    ...change,
  });

  it('are every refusal a renewal answers; a lease that ran out untaken is renewed', () => {
    const situations: [string, GrantedScope | null, number][] = [
      ['never created', null, 3],
      ['deleted', scope({ status: 'deleted', holder: null }), 3],
      ['fence moved on', scope({ holder: 'worker-2' }), 2],
      ['another holder', scope({ holder: 'worker-2' }), 3],
      ['released or cancelled', scope({ holder: null }), 3],
      ['bound to another token', scope({ grantTokenId: 'tok_other' }), 3],
    ];
    const caller = { tokenId: 'tok_mine', role: 'worker' as const, mayTakeOver: [] };
    const codes = situations.map(([what, state, fence]) => {
      const decision = decideRenew('s', state, { holder, fence, ttlMs: 1_000 }, at, caller);
      expect(decision.ok, what).toBe(false);
      return decision.ok ? null : decision.error.code;
    });
    expect(new Set(codes)).toEqual(new Set(RENEWAL_LEASE_LOST_CODES));
    const ranOut = scope({ leaseExpiresAt: at - 1 });
    expect(decideRenew('s', ranOut, { holder, fence: 3, ttlMs: 1_000 }, at).ok).toBe(true);
  });

  it('of a commit are the fence checks, answered before any record is read', () => {
    const request: NormalizedCommit = {
      scope: 's',
      fence: 3,
      operationId: 'op-1',
      reads: [],
      writes: [],
      intents: [],
    };
    const situations: (GrantedScope | null)[] = [
      null,
      scope({ status: 'deleted' }),
      scope({ fence: 4 }),
      scope({ holder: null }),
      scope({ leaseExpiresAt: at }),
    ];
    const codes = situations.map(
      (state) =>
        checkCommit({
          request,
          scope: state,
          now: at,
          record: () => {
            throw new Error('a fence check reads no record');
          },
          wasDeletedAt: () => false,
          effectKeyExists: () => false,
        })?.code,
    );
    expect(codes).toEqual([...COMMIT_AUTHORITY_LOST_CODES]);
    expect(COMMIT_REJECTION_CODES.slice(0, codes.length)).toEqual(codes);
  });
});
