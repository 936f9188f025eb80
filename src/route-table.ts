/**
 * The HTTP routes as data: for each route its name, method, path, who may call it and how a
 * client may retry it. The server's route specs (server/routes/) take method, path and auth from
 * here by name, the OpenAPI document carries each retry class, and the TypeScript client builds
 * its paths and retries from it, so a new route is one entry here plus its handler. Plain data and
 * one pure function: importable by the client, no server code, nothing Node-only.
 */

/** public: no token; worker: any tenant token; operator: an operator token; admin: the admin token. */
export type RouteAuth = 'public' | 'worker' | 'operator' | 'admin';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/**
 * What a client may do after a request's reply was lost (docs/http.md, "From TypeScript"). A
 * request that never reached the server, or that was answered store_unavailable, may always be
 * sent again: nothing changed.
 *
 * - `read`: changes nothing; sent again.
 * - `idempotent`: the same body again changes nothing more; sent again as it was.
 * - `idempotent-when-timed`: `idempotent` when every job event carries `at` (a job keeps its
 *   latest event by `at`), otherwise `none`: an event stamped by the store could hide a newer one.
 * - `commit`: the commit rule: read the stored outcome of its operationId; only when there is
 *   none yet, send the same operation (same operationId) again; abandon it to settle.
 * - `lease`: moves or keeps a scope's authority (acquire, renew, release, takeover, cancel,
 *   delete); never sent again blindly (a resent takeover moves the fence twice): read the scope.
 * - `none`: any other write that may have taken effect; never sent again (outcome_unknown).
 */
export const RETRY_CLASSES = [
  'read',
  'idempotent',
  'idempotent-when-timed',
  'commit',
  'lease',
  'none',
] as const;

export type RetryClass = (typeof RETRY_CLASSES)[number];

export interface RouteEntry {
  readonly method: HttpMethod;
  /** With `:param` segments (`/v1/scopes/:scope`). */
  readonly path: string;
  readonly auth: RouteAuth;
  /** An operator route that a worker token with a take-over right may call too. */
  readonly takeOverRight?: boolean;
  readonly retry: RetryClass;
}

export const ROUTE_TABLE = {
  acquire: { method: 'POST', path: '/v1/leases/acquire', auth: 'worker', retry: 'lease' },
  renew: { method: 'POST', path: '/v1/leases/renew', auth: 'worker', retry: 'lease' },
  release: { method: 'POST', path: '/v1/leases/release', auth: 'worker', retry: 'lease' },
  // Cancelling again finds nothing pending left to cancel: a retry changes nothing more.
  cancelIntents: {
    method: 'POST',
    path: '/v1/leases/cancel-intents',
    auth: 'worker',
    retry: 'idempotent',
  },
  getScope: { method: 'GET', path: '/v1/scopes/:scope', auth: 'worker', retry: 'read' },
  listScopes: { method: 'GET', path: '/v1/scopes', auth: 'worker', retry: 'read' },
  takeover: {
    method: 'POST',
    path: '/v1/scopes/:scope/takeover',
    auth: 'operator',
    takeOverRight: true,
    retry: 'lease',
  },
  cancel: { method: 'POST', path: '/v1/scopes/:scope/cancel', auth: 'operator', retry: 'lease' },
  deleteScope: { method: 'DELETE', path: '/v1/scopes/:scope', auth: 'operator', retry: 'lease' },
  getRecord: {
    method: 'GET',
    path: '/v1/scopes/:scope/records/:name',
    auth: 'worker',
    retry: 'read',
  },
  listRecords: { method: 'GET', path: '/v1/scopes/:scope/records', auth: 'worker', retry: 'read' },
  // A POST only because the reads do not fit a query string; it changes nothing.
  readRecords: { method: 'POST', path: '/v1/scopes/:scope/reads', auth: 'worker', retry: 'read' },
  commit: { method: 'POST', path: '/v1/commit', auth: 'worker', retry: 'commit' },
  // Each commit's operationId applies it at most once: the same batch again answers those that
  // landed with their stored outcomes and applies the others.
  commitMany: { method: 'POST', path: '/v1/commits', auth: 'worker', retry: 'idempotent' },
  getOperation: {
    method: 'GET',
    path: '/v1/operations/:operationId',
    auth: 'worker',
    retry: 'read',
  },
  abandonOperation: {
    method: 'POST',
    path: '/v1/operations/:operationId/abandon',
    auth: 'worker',
    retry: 'idempotent',
  },
  listIntents: { method: 'GET', path: '/v1/intents', auth: 'worker', retry: 'read' },
  getIntent: { method: 'GET', path: '/v1/intents/:effectKey', auth: 'worker', retry: 'read' },
  claimIntents: { method: 'POST', path: '/v1/intents/claim', auth: 'worker', retry: 'none' },
  completeIntent: {
    method: 'POST',
    path: '/v1/intents/:effectKey/complete',
    auth: 'worker',
    retry: 'idempotent',
  },
  registerPolicy: { method: 'POST', path: '/v1/policies', auth: 'operator', retry: 'idempotent' },
  listPolicies: { method: 'GET', path: '/v1/policies', auth: 'operator', retry: 'read' },
  cutover: { method: 'POST', path: '/v1/cutovers', auth: 'operator', retry: 'idempotent' },
  listCutovers: { method: 'GET', path: '/v1/cutovers', auth: 'operator', retry: 'read' },
  cutoverReport: {
    method: 'GET',
    path: '/v1/cutovers/:cutoverId/report',
    auth: 'operator',
    retry: 'read',
  },
  // Started again under its rolloutId, a rollout is the same one (operation_id_conflict otherwise).
  startRollout: { method: 'POST', path: '/v1/rollouts', auth: 'operator', retry: 'idempotent' },
  listRollouts: { method: 'GET', path: '/v1/rollouts', auth: 'operator', retry: 'read' },
  getRollout: { method: 'GET', path: '/v1/rollouts/:rolloutId', auth: 'operator', retry: 'read' },
  // A step command without `revision` sent twice would move two steps.
  advanceRollout: {
    method: 'POST',
    path: '/v1/rollouts/:rolloutId/advance',
    auth: 'operator',
    retry: 'none',
  },
  pauseRollout: {
    method: 'POST',
    path: '/v1/rollouts/:rolloutId/pause',
    auth: 'operator',
    retry: 'none',
  },
  resumeRollout: {
    method: 'POST',
    path: '/v1/rollouts/:rolloutId/resume',
    auth: 'operator',
    retry: 'none',
  },
  promoteRollout: {
    method: 'POST',
    path: '/v1/rollouts/:rolloutId/promote',
    auth: 'operator',
    retry: 'none',
  },
  // A rollback sent again resumes the same rollback: it only goes forward.
  rollbackRollout: {
    method: 'POST',
    path: '/v1/rollouts/:rolloutId/rollback',
    auth: 'operator',
    retry: 'idempotent',
  },
  rolloutReport: {
    method: 'GET',
    path: '/v1/rollouts/:rolloutId/report',
    auth: 'operator',
    retry: 'read',
  },
  recordJobEvents: {
    method: 'POST',
    path: '/v1/jobs/events',
    auth: 'worker',
    retry: 'idempotent-when-timed',
  },
  audit: { method: 'GET', path: '/v1/audit', auth: 'operator', retry: 'read' },
  verify: { method: 'GET', path: '/v1/verify', auth: 'operator', retry: 'read' },
  createToken: { method: 'POST', path: '/v1/admin/tokens', auth: 'admin', retry: 'none' },
  listTokens: { method: 'GET', path: '/v1/admin/tokens', auth: 'admin', retry: 'read' },
  // A deletion that already happened answers not_found and changes nothing.
  deleteToken: {
    method: 'DELETE',
    path: '/v1/admin/tokens/:id',
    auth: 'admin',
    retry: 'idempotent',
  },
  healthz: { method: 'GET', path: '/healthz', auth: 'public', retry: 'read' },
  readyz: { method: 'GET', path: '/readyz', auth: 'public', retry: 'read' },
  metrics: { method: 'GET', path: '/metrics', auth: 'public', retry: 'read' },
  openapi: { method: 'GET', path: '/openapi.json', auth: 'public', retry: 'read' },
} as const satisfies Record<string, RouteEntry>;

export type RouteName = keyof typeof ROUTE_TABLE;

export const ROUTE_NAMES = Object.keys(ROUTE_TABLE) as RouteName[];

/** The `:param` names of a path, as a union (never for a path without one). */
type ParamNames<P extends string> = P extends `${string}:${infer Param}/${infer Rest}`
  ? Param | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Param}`
    ? Param
    : never;

/** The values a route's path needs, one per `:param`. */
export type RouteParams<N extends RouteName> = {
  readonly [K in ParamNames<(typeof ROUTE_TABLE)[N]['path']>]: string;
};

/** How one path value becomes a segment: percent-encoding, after the caller's own checks. */
export type SegmentEncoder = (value: string, param: string) => string;

/**
 * The path of a route with each `:param` filled by its value, encoded by `encode`
 * (percent-encoding by default, so a `/` in a value stays inside its segment).
 */
export function routePath<N extends RouteName>(
  name: N,
  params: RouteParams<N>,
  encode: SegmentEncoder = (value) => encodeURIComponent(value),
): string {
  const values = params as Readonly<Record<string, string>>;
  return ROUTE_TABLE[name].path.replace(/:([A-Za-z0-9_]+)/g, (_match, param: string) => {
    const value = values[param];
    if (value === undefined) throw new TypeError(`route ${name} needs the path value ${param}`);
    return encode(value, param);
  });
}

/** The table as JSON-ready data, in table order, for clients generated in other languages. */
export function routeTableJson(): {
  routes: (RouteEntry & { name: RouteName; params: string[] })[];
} {
  return {
    routes: ROUTE_NAMES.map((name) => {
      const entry: RouteEntry = ROUTE_TABLE[name];
      return {
        name,
        ...entry,
        params: [...entry.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!),
      };
    }),
  };
}
