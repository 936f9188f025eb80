/**
 * The operator dashboard under /ui: sign-in and sign-out, the page of panels, one fragment URL per
 * panel (what the page polls), a page per scope, and its two assets. Every answer carries a strict
 * Content-Security-Policy. Registered as an encapsulated plugin: its form parser and headers do not
 * reach the JSON API, and its routes are not part of the API's OpenAPI document.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BackgroundVerifier } from '../../audit/background-verifier.js';
import { isFencegateError, type FencegateError } from '../../errors.js';
import type { Fencegate } from '../../gate.js';
import type { Store } from '../../store/store.js';
import { retryAfterSeconds } from '../tenant-rate-limit.js';
import { ActivityCounters } from './activity.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import { clearedSessionCookie, readSessionCookie, sessionCookie } from './cookies.js';
import type { DashboardApi } from './dashboard-api.js';
import { toHtmlString, withQuery, type Html } from './html.js';
import { activityPanel } from './panels/activity.js';
import { summaryPanel } from './panels/summary.js';
import { summaryFigures } from './summary.js';
import { cutoversPanel } from './panels/cutovers.js';
import { rolloutsPanel } from './panels/rollouts.js';
import { intentsPanel } from './panels/intents.js';
import { recordDetail, scopeDetail } from './panels/scope-page.js';
import { scopesPanel, type ScopesQuery } from './panels/scopes.js';
import { verifyPanel } from './panels/verify.js';
import {
  dashboardPage,
  errorFragment,
  errorPage,
  scopePage,
  signInPage,
  type PanelSpec,
} from './pages.js';
import { DashboardSessions, SESSION_TTL_MS, type Session } from './sessions.js';
import { operatorSession } from './sign-in.js';

export interface DashboardOptions {
  store: Store;
  /** The server's library facade; each request gets its signed-in tenant's handle. */
  gate: Fencegate;
  /** The server's background verifier: the Verify panel shows its result, never replays. */
  verifier: BackgroundVerifier;
  adminToken?: string | undefined;
  /** How often the page refreshes its panels, in ms (verify and rollouts: five times less often). */
  pollMs?: number;
  /**
   * The server runs behind a proxy that terminates TLS: its X-Forwarded-Proto says whether the
   * browser's connection was https (then the session cookie is Secure). Never trusted otherwise:
   * any client could send the header.
   */
  trustProxy?: boolean;
  /**
   * Takes one request of `tenant`'s rate (`--tenant-rate`), or throws rate_limited: the pages and
   * panels read the store as the API's routes do, so they count against the same rate.
   */
  limitRate?: (tenant: string) => void;
}

const DEFAULT_POLL_MS = 2000;
const MAX_SIGN_IN_BODY = 4096;
const FORM_TYPE = 'application/x-www-form-urlencoded';
const SIGN_IN_FORM_HINT = `sign in with this page's form: the token field only, sent as ${FORM_TYPE} of at most ${MAX_SIGN_IN_BODY} bytes`;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

type Panel = (api: DashboardApi, query: ScopesQuery, now: number, tenant: string) => Promise<Html>;

export function dashboardRoutes(options: DashboardOptions) {
  const { store, gate } = options;
  const sessions = new DashboardSessions(store);
  const activity = new ActivityCounters();
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;

  const panels: Record<string, { title: string; every: number; render: Panel }> = {
    // First: what an operator asks first, on the first screen.
    summary: {
      title: 'Is anything wrong?',
      every: pollMs,
      render: async (api, _query, now, tenant) => {
        const view = await activity.forTenant(tenant).refresh(api, now);
        const { violations } = options.verifier.forTenant(tenant);
        return summaryPanel(await summaryFigures(api, view, violations, now));
      },
    },
    scopes: {
      title: 'Scopes',
      every: pollMs,
      render: (api, query, now) => scopesPanel(api, query, now),
    },
    activity: {
      title: 'Commits and rejections per minute',
      every: pollMs,
      render: async (api, _query, now, tenant) =>
        activityPanel(await activity.forTenant(tenant).refresh(api, now)),
    },
    intents: { title: 'Intents', every: pollMs, render: (api) => intentsPanel(api) },
    cutovers: { title: 'Cutovers', every: pollMs, render: (api) => cutoversPanel(api) },
    // Each rollout's report reads its steps' cutovers, scopes and jobs: five times less often.
    rollouts: {
      title: 'Rollouts',
      every: pollMs * 5,
      render: (api, _query, now) => rolloutsPanel(api, now),
    },
    verify: {
      title: 'Verify',
      every: pollMs * 5,
      render: async (_api, _query, _now, tenant) => {
        // Brings the shared verifier up to date: it reads only the entries appended since its
        // last pass (every tab and the metrics share one pass), never the history again.
        await options.verifier.runOnce();
        return verifyPanel({
          ...options.verifier.forTenant(tenant),
          lastRunAt: options.verifier.lastRunAt,
          lastSeq: options.verifier.lastSeq,
        });
      },
    },
  };

  async function sessionOf(request: FastifyRequest): Promise<Session | null> {
    return sessions.find(readSessionCookie(request.headers.cookie));
  }

  /** Whether the browser reached this server over TLS: directly, or through a trusted proxy. */
  function overTls(request: FastifyRequest): boolean {
    if (request.protocol === 'https') return true;
    if (options.trustProxy !== true) return false;
    // A chain of proxies lists each hop; the first is what the browser used.
    const forwarded = request.headers['x-forwarded-proto'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0];
    return first?.trim().toLowerCase() === 'https';
  }

  /** The refusal of a request past its tenant's rate (with its Retry-After), or null. */
  function overRate(reply: FastifyReply, tenant: string): FencegateError | null {
    try {
      options.limitRate?.(tenant);
      return null;
    } catch (error) {
      if (!isFencegateError(error)) throw error;
      void reply.header('retry-after', retryAfterSeconds(error.details.retryAfterMs as number));
      return error;
    }
  }

  function send(reply: FastifyReply, status: number, page: Html): FastifyReply {
    return reply.code(status).type('text/html; charset=utf-8').send(toHtmlString(page));
  }

  /** The page's body, or the API's refusal shown as text in its place. */
  async function orRefusal(render: () => Promise<Html>): Promise<Html> {
    try {
      return await render();
    } catch (error) {
      if (!isFencegateError(error)) throw error;
      return errorFragment(error.code, error.message);
    }
  }

  /** A refusal of the API, shown as text in a panel, with its catalog status. */
  function refusal(reply: FastifyReply, error: unknown): FastifyReply {
    if (!isFencegateError(error)) throw error;
    return send(reply, error.httpStatus, errorFragment(error.code, error.message));
  }

  return function dashboard(
    app: FastifyInstance,
    _options: unknown,
    done: (error?: Error) => void,
  ): void {
    app.addContentTypeParser(
      FORM_TYPE,
      { parseAs: 'string', bodyLimit: MAX_SIGN_IN_BODY },
      (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      },
    );

    app.addHook('onSend', (request, reply, payload, done) => {
      void reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
      void reply.header('x-content-type-options', 'nosniff');
      // same-origin, not no-referrer: with no-referrer a browser posts forms with `Origin: null`.
      void reply.header('referrer-policy', 'same-origin');
      void reply.header('x-frame-options', 'DENY');
      if (!request.url.startsWith('/ui/assets/')) void reply.header('cache-control', 'no-store');
      done(null, payload);
    });

    // A page, not a JSON error body: a store that cannot be reached shows no data (fail closed).
    app.setErrorHandler((error, request, reply) => {
      // A sign-in body the JSON parser refused is answered like any other unusable sign-in body.
      if (isFencegateError(error) && bodyRefused(error) && request.url.startsWith('/ui/sign-in')) {
        return send(reply, error.httpStatus, signInPage(SIGN_IN_FORM_HINT));
      }
      if (isFencegateError(error)) {
        return send(reply, error.httpStatus, errorPage(error.code, error.message));
      }
      // The request itself was refused before a handler ran (too large, another media type,
      // unparsable): the client's mistake, answered with its status and what to send instead.
      const status = clientErrorStatus(error);
      if (status !== undefined) {
        if (request.url.startsWith('/ui/sign-in'))
          return send(reply, status, signInPage(SIGN_IN_FORM_HINT));
        return send(reply, status, errorPage('invalid_request', 'the request is malformed'));
      }
      request.log.error({ err: error }, 'unexpected error');
      return send(reply, 500, errorPage('internal_error', `logged under request id ${request.id}`));
    });

    app.get('/', (_request, reply) => reply.redirect('/ui', 302));

    app.get('/ui', async (request, reply) => {
      const session = await sessionOf(request);
      if (session === null) return send(reply, 200, signInPage(null));
      const limited = overRate(reply, session.tenant);
      if (limited !== null) return send(reply, 429, errorPage(limited.code, limited.message));
      const query = scopesQuery(request.query);
      const api = gate.forTenant(session.tenant);
      const now = await store.now();
      const specs: PanelSpec[] = [];
      for (const [name, panel] of Object.entries(panels)) {
        let body: Html;
        try {
          body = await panel.render(api, query, now, session.tenant);
        } catch (error) {
          if (!isFencegateError(error)) throw error;
          body = errorFragment(error.code, error.message);
        }
        specs.push({
          name,
          title: panel.title,
          every: panel.every,
          src: withQuery(`/ui/panels/${name}`, name === 'scopes' ? { ...query } : {}),
          body,
        });
      }
      return send(reply, 200, dashboardPage(session.tenant, query, specs));
    });

    app.get<{ Params: { panel: string } }>('/ui/panels/:panel', async (request, reply) => {
      const panel = panels[request.params.panel];
      if (panel === undefined || !Object.hasOwn(panels, request.params.panel)) {
        return send(reply, 404, errorFragment('not_found', 'no such panel'));
      }
      const session = await sessionOf(request);
      if (session === null) return send(reply, 401, errorFragment('unauthorized', 'signed out'));
      const limited = overRate(reply, session.tenant);
      if (limited !== null) return send(reply, 429, errorFragment(limited.code, limited.message));
      try {
        const api = gate.forTenant(session.tenant);
        const body = await panel.render(
          api,
          scopesQuery(request.query),
          await store.now(),
          session.tenant,
        );
        return send(reply, 200, body);
      } catch (error) {
        return refusal(reply, error);
      }
    });

    app.get<{ Params: { scope: string } }>('/ui/scopes/:scope', async (request, reply) => {
      const session = await sessionOf(request);
      if (session === null) return reply.redirect('/ui', 303);
      const limited = overRate(reply, session.tenant);
      if (limited !== null) return send(reply, 429, errorPage(limited.code, limited.message));
      const name = request.params.scope;
      const cursor = param(request.query, 'cursor');
      const after = param(request.query, 'after');
      const historyAfter =
        after !== undefined && /^\d{1,15}$/.test(after) ? Number(after) : undefined;
      const api = gate.forTenant(session.tenant);
      const body = await orRefusal(async () =>
        scopeDetail(api, name, await store.now(), cursor, historyAfter),
      );
      return send(reply, 200, scopePage(session.tenant, name, body));
    });

    app.get<{ Params: { scope: string; record: string } }>(
      '/ui/scopes/:scope/records/:record',
      async (request, reply) => {
        const session = await sessionOf(request);
        if (session === null) return reply.redirect('/ui', 303);
        const limited = overRate(reply, session.tenant);
        if (limited !== null) return send(reply, 429, errorPage(limited.code, limited.message));
        const { scope, record } = request.params;
        const api = gate.forTenant(session.tenant);
        const body = await orRefusal(() => recordDetail(api, scope, record));
        return send(reply, 200, scopePage(session.tenant, scope, body));
      },
    );

    app.post('/ui/sign-in', async (request, reply) => {
      if (!sameOrigin(request))
        return send(reply, 403, signInPage("sign in from this server's own page"));
      // The JSON API's parser reaches this route too: only the page's own form signs in.
      if (!isForm(request.headers['content-type']))
        return send(reply, 415, signInPage(SIGN_IN_FORM_HINT));
      const form = (request.body ?? {}) as Record<string, unknown>;
      try {
        const session = await operatorSession(form.token, store, options.adminToken);
        const id = sessions.open(session);
        void reply.header('set-cookie', sessionCookie(id, SESSION_TTL_MS / 1000, overTls(request)));
        return reply.redirect('/ui', 303);
      } catch (error) {
        if (!isFencegateError(error)) throw error;
        return send(reply, error.httpStatus, signInPage(error.message));
      }
    });

    app.post('/ui/sign-out', (request, reply) => {
      if (!sameOrigin(request)) return send(reply, 403, signInPage(null));
      sessions.close(readSessionCookie(request.headers.cookie));
      void reply.header('set-cookie', clearedSessionCookie(overTls(request)));
      return reply.redirect('/ui', 303);
    });

    app.get('/ui/assets/dashboard.js', (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'max-age=300')
        .send(DASHBOARD_JS),
    );
    app.get('/ui/assets/dashboard.css', (_request, reply) =>
      reply
        .type('text/css; charset=utf-8')
        .header('cache-control', 'max-age=300')
        .send(DASHBOARD_CSS),
    );
    done();
  };
}

/** The first value of a query parameter, when it is a string. */
function param(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | null)?.[name];
  const first = Array.isArray(value) ? (value[0] as unknown) : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}

function scopesQuery(query: unknown): ScopesQuery {
  const prefix = param(query, 'prefix');
  const cursor = param(query, 'cursor');
  return {
    ...(prefix === undefined ? {} : { prefix }),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

function isForm(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === FORM_TYPE;
}

/** The 4xx status of an error Fastify raised while reading a request, or undefined. */
function clientErrorStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/**
 * A form post from another site's page is refused even before SameSite does its part: a browser
 * sends Origin on every POST, and it must be this server.
 */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** Whether the request's body itself was refused before a handler ran (not JSON, say). */
function bodyRefused(error: { code: string; details?: unknown }): boolean {
  const details = error.details as { field?: unknown } | undefined;
  return error.code === 'invalid_request' && details?.field === 'body';
}
