/**
 * The dashboard over HTTP, without a browser: sign-in with an operator token only, the session
 * cookie's attributes, the tenant it is bound to, sign-out, a deleted token ending its sessions,
 * a strict Content-Security-Policy, hostile names and values shown as text and linked only as
 * encoded path segments, failing closed when the store is unreachable, and the token never in a
 * page, a URL or a log line. The JSON API keeps refusing form bodies.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/server/tokens.js';
import { pathSegment } from '../../src/server/ui/html.js';
import { faultyStore, type FaultyStore } from '../../src/testing/faulty-store.js';
import {
  ADMIN_TOKEN,
  capturedLogger,
  serverFixture,
  type ServerFixture,
} from '../server/fixture.js';

let fx: ServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const HOSTILE_SCOPES = ['javascript:x', '//evil.invalid/@x', 'x/../../v1/admin/tokens'];
const HOSTILE_TEXT = '<img src=x onerror=alert(1)>';

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

async function signIn(f: ServerFixture, token: string, headers: Record<string, string> = {}) {
  return f.app.inject({
    method: 'POST',
    url: '/ui/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form({ token }),
  });
}

async function sessionCookieOf(f: ServerFixture, token: string): Promise<string> {
  const response = await signIn(f, token);
  expect(response.statusCode).toBe(303);
  const cookie = String(response.headers['set-cookie']);
  return cookie.split(';')[0] ?? '';
}

function get(f: ServerFixture, url: string, cookie?: string) {
  return f.app.inject({ method: 'GET', url, headers: cookie === undefined ? {} : { cookie } });
}

describe('the dashboard', () => {
  it('leads / to /ui and signs in with an operator token only; the cookie is HttpOnly, SameSite=Strict', async () => {
    const { logger, lines } = capturedLogger();
    const f = (fx = await serverFixture({ logger }));
    const root = await get(f, '/');
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/ui');

    const page = await get(f, '/ui');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('name="token"');
    // The command it shows runs in a clone, and names what the CLI cannot guess.
    expect(page.body).toContain(
      'npx fencegate token create --tenant TENANT --role operator --store URL',
    );
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );

    for (const [token, status, message] of [
      [f.tokens.workerA, 403, 'needs an operator token'],
      [ADMIN_TOKEN, 403, 'only manages tokens'],
      ['fg_not-a-token', 401, 'unknown token'],
      ['', 401, 'paste an operator token'],
    ] as const) {
      const refused = await signIn(f, token);
      expect(refused.statusCode, token).toBe(status);
      expect(refused.body).toContain(message);
      expect(refused.headers['set-cookie']).toBeUndefined();
      if (token !== '') expect(refused.body).not.toContain(token);
    }

    const accepted = await signIn(f, f.tokens.operatorA);
    expect(accepted.statusCode).toBe(303);
    expect(accepted.headers.location).toBe('/ui');
    const cookie = String(accepted.headers['set-cookie']);
    expect(cookie).toMatch(/^fencegate_session=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/ui');
    expect(cookie).not.toContain(f.tokens.operatorA);

    const signedIn = await get(f, '/ui', cookie.split(';')[0]);
    expect(signedIn.body).toContain('tenant <b>tenant-a</b>');
    expect(signedIn.body).not.toContain(f.tokens.operatorA);
    for (const token of Object.values(f.tokens)) {
      expect(lines.join('')).not.toContain(token);
    }
    expect(lines.join('')).not.toContain(ADMIN_TOKEN);
    expect(lines.some((line) => line.includes('"route":"/ui/sign-in"'))).toBe(true);
  });

  it('shows only the signed-in tenant, and ends the session on sign-out and when its token is deleted', async () => {
    const f = (fx = await serverFixture());
    const worker = async (token: string, scope: string) => {
      const answer = await f.send('POST', '/v1/leases/acquire', token, {
        scope,
        holder: 'w1',
        ttlMs: 60_000,
      });
      expect(answer.statusCode).toBe(200);
    };
    await worker(f.tokens.workerA, 'alpha-scope');
    await worker(f.tokens.workerB, 'bravo-scope');
    const cookie = await sessionCookieOf(f, f.tokens.operatorA);
    const panel = await get(f, '/ui/panels/scopes', cookie);
    expect(panel.statusCode).toBe(200);
    expect(panel.body).toContain('alpha-scope');
    expect(panel.body).not.toContain('bravo-scope');
    expect((await get(f, '/ui/panels/scopes')).statusCode).toBe(401);
    expect((await get(f, '/ui/panels/nope', cookie)).statusCode).toBe(404);
    expect((await get(f, '/ui/panels/constructor', cookie)).statusCode).toBe(404);

    const out = await f.app.inject({ method: 'POST', url: '/ui/sign-out', headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await get(f, '/ui/panels/scopes', cookie)).statusCode).toBe(401);

    // A second session, then its token is deleted through the admin endpoint.
    const again = await sessionCookieOf(f, f.tokens.operatorA);
    expect((await get(f, '/ui/panels/scopes', again)).statusCode).toBe(200);
    const record = await f.store.findToken(hashToken(f.tokens.operatorA));
    const deleted = await f.send('DELETE', `/v1/admin/tokens/${record?.id}`, ADMIN_TOKEN);
    expect(deleted.statusCode).toBe(200);
    expect((await get(f, '/ui/panels/scopes', again)).statusCode).toBe(401);
    expect((await get(f, '/ui', again)).body).toContain('name="token"');
  });

  it('renders hostile names and values as text and links names only as encoded path segments', async () => {
    const f = (fx = await serverFixture());
    for (const scope of HOSTILE_SCOPES) {
      const grant = await f.send('POST', '/v1/leases/acquire', f.tokens.workerA, {
        scope,
        holder: 'w1',
        ttlMs: 60_000,
      });
      expect(grant.statusCode).toBe(200);
      const commit = await f.send('POST', '/v1/commit', f.tokens.workerA, {
        scope,
        fence: 1,
        operationId: `op-${HOSTILE_SCOPES.indexOf(scope)}`,
        writes: [{ name: 'note', expectRevision: 0, value: { text: HOSTILE_TEXT } }],
        intents: [
          {
            effectKey: `fx-${HOSTILE_SCOPES.indexOf(scope)}`,
            target: 'crm',
            payload: { html: HOSTILE_TEXT },
          },
        ],
      });
      expect(commit.statusCode).toBe(200);
    }
    const policy = await f.send('POST', '/v1/policies', f.tokens.operatorA, {
      version: 'v1',
      description: HOSTILE_TEXT,
    });
    expect(policy.statusCode).toBe(201);
    const cookie = await sessionCookieOf(f, f.tokens.operatorA);
    const page = await get(f, '/ui', cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('<img');
    expect(page.body).toContain(
      '<span class="description">&lt;img src=x onerror=alert(1)&gt;</span>',
    );
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const hrefs = [...page.body.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    expect(hrefs).toContain('/ui/scopes/javascript%3Ax');
    expect(hrefs).toContain('/ui/scopes/%2F%2Fevil.invalid%2F%40x');
    expect(hrefs).toContain('/ui/scopes/x%2F..%2F..%2Fv1%2Fadmin%2Ftokens');
    for (const href of hrefs) expect(href).toMatch(/^\/ui(\/|\?|$)/);
    // Names cannot be `.` or `..`, which a URL parser would resolve away even encoded; were one
    // ever shown, it would get no link.
    expect(pathSegment('..')).toBeNull();
    expect(pathSegment('.')).toBeNull();

    const detail = await get(f, '/ui/scopes/x%2F..%2F..%2Fv1%2Fadmin%2Ftokens', cookie);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('x/../../v1/admin/tokens');
    expect(detail.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(detail.body).not.toContain('<img');

    const filtered = await get(f, '/ui/panels/scopes?prefix=%2F%2Fevil', cookie);
    expect(filtered.body).toContain('//evil.invalid/@x');
    expect(filtered.body).not.toContain('javascript:x');
    const bad = await get(f, '/ui/panels/scopes?prefix=%3Cb%3E', cookie);
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('invalid_request');
    expect(bad.body).not.toContain('<b>>');
  });

  it('counts commits and rejected commits per minute by reason, reading only new audit entries', async () => {
    const f = (fx = await serverFixture());
    const cookie = await sessionCookieOf(f, f.tokens.operatorA);
    const acquire = await f.send('POST', '/v1/leases/acquire', f.tokens.workerA, {
      scope: 'wf-1',
      holder: 'w1',
      ttlMs: 60_000,
    });
    expect(acquire.statusCode).toBe(200);
    const commit = (operationId: string, fence: number, expectRevision = 0) =>
      f.send('POST', '/v1/commit', f.tokens.workerA, {
        scope: 'wf-1',
        fence,
        operationId,
        writes: [{ name: 'doc', expectRevision, value: operationId }],
      });
    expect((await commit('op-1', 1)).statusCode).toBe(200);
    const before = await get(f, '/ui/panels/activity', cookie);
    expect(before.body).not.toContain('stale_fence');
    const takeover = await f.send('POST', '/v1/scopes/wf-1/takeover', f.tokens.operatorA, {
      holder: 'op',
    });
    expect(takeover.statusCode).toBe(200);
    expect((await commit('op-2', 1)).statusCode).toBe(409);
    expect((await commit('op-3', 1)).statusCode).toBe(409);
    expect((await commit('op-4', 2, 5)).statusCode).toBe(409);
    const after = await get(f, '/ui/panels/activity', cookie);
    const cells = [...after.body.matchAll(/data-reason="([a-z_]+)">\s*(\d+)\s*</g)].filter(
      (match) => match[2] !== '0',
    );
    expect(cells.map((match) => [match[1], Number(match[2])])).toEqual([
      ['stale_fence', 2],
      ['stale_revision', 1],
    ]);
    // Read again: nothing is counted twice.
    const again = await get(f, '/ui/panels/activity', cookie);
    expect(again.body).toBe(after.body);
    // A count's header sits over its column: right-aligned like the numbers.
    expect(after.body).toMatch(/<th class="num">\s*stale_fence\s*<\/th>/);
    // The chart: one stacked bar per minute, each part with its figure as a title; the table
    // lists only the minute that had commits, not ten rows of zeros.
    const minute = new Date(f.clock.now()).toISOString().slice(11, 16);
    const parts = [
      ...after.body.matchAll(/data-series="([a-z_]+)"\s+data-count="(\d+)"\s*><title>([^<]*)</g),
    ].map((match) => [match[1], Number(match[2]), match[3]]);
    expect(parts).toEqual([
      ['committed', 1, `${minute} UTC: 1 committed`],
      ['stale_fence', 2, `${minute} UTC: 2 stale_fence`],
      ['stale_revision', 1, `${minute} UTC: 1 stale_revision`],
    ]);
    expect(after.body.match(/<g data-minute=/g)).toHaveLength(10);
    expect(after.body.match(/<tbody>[\s\S]*<\/tbody>/)![0].match(/<tr>/g)).toHaveLength(1);
    expect(after.body).toContain('rejected: stale_revision');
    expect(after.body).not.toContain('style=');
    expect(before.body).toContain('<title>');

    // The first panel answers "is anything wrong?": the figures an operator looks at first.
    const page = await get(f, '/ui', cookie);
    expect(page.body.indexOf('id="panel-summary"')).toBeGreaterThan(0);
    expect(page.body.indexOf('id="panel-summary"')).toBe(page.body.indexOf('id="panel-'));
    const summary = await get(f, '/ui/panels/summary', cookie);
    const figures = Object.fromEntries(
      [
        ...summary.body.matchAll(
          /data-figure="([a-z0-9_]+)"[^>]*>\s*<span class="big">([^<]+)<\/span>/g,
        ),
      ].map((match): [string, string] => [match[1]!, match[2]!]),
    );
    expect(figures).toEqual({
      violations: '0',
      stale_accepted: '0',
      unknown_intents: '0',
      needs_attention: '0',
      rejected_10_min: '3',
    });
    expect(summary.body).toMatch(/data-figure="rejected_10_min" class="[^"]*bad/);

    // A scope's page has its history: the fence and holder timeline and the refused attempts.
    const scopePage = await get(f, '/ui/scopes/wf-1', cookie);
    const history = scopePage.body.slice(scopePage.body.indexOf('<h3>History</h3>'));
    const timeline = [...history.matchAll(/<tr class="(bad)?">([\s\S]*?)<\/tr>/g)].map((row) =>
      [...row[2]!.matchAll(/<td[^>]*>\s*([^<]*?)\s*<\/td>/g)].map((cell) => cell[1]).slice(2),
    );
    // A commit shows the fence it presented and that fence's holder, a grant the fence it gave.
    expect(timeline).toEqual([
      ['acquire', 'granted', '1', 'w1', '', ''],
      ['commit', 'committed', '1', 'w1', 'op-1', ''],
      ['takeover', 'granted', '2', 'op', '', ''],
      ['commit', 'rejected', '1', 'w1', 'op-2', 'stale_fence'],
      ['commit', 'rejected', '1', 'w1', 'op-3', 'stale_fence'],
      ['commit', 'rejected', '2', 'op', 'op-4', 'stale_revision'],
    ]);
  });

  it('charts each rollout: its ramp over time with its events, its state and counts, no gates, as text', async () => {
    const f = (fx = await serverFixture());
    const op = f.tokens.operatorA;
    for (const version of ['v7', 'v8']) await f.send('POST', '/v1/policies', op, { version });
    const cookie = await sessionCookieOf(f, op);
    expect((await get(f, '/ui/panels/rollouts', cookie)).body).toContain(
      'no active or recently finished rollouts',
    );
    const started = await f.send('POST', '/v1/rollouts', op, {
      rolloutId: 'ramp:v8/1',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      // Named scopes need not exist yet: a step moves them all the same.
      scopes: Array.from({ length: 20 }, (_, i) => `wf-${i}`),
      steps: [25, 50, 100],
      reason: HOSTILE_TEXT,
    });
    expect(started.statusCode).toBe(200);
    f.clock.advance(60_000);
    await f.send('POST', '/v1/rollouts/ramp:v8%2F1/advance', op, {});
    f.clock.advance(60_000);
    await f.send('POST', '/v1/rollouts/ramp:v8%2F1/pause', op, {});
    f.clock.advance(30_000);

    const paused = await get(f, '/ui/panels/rollouts', cookie);
    expect(paused.statusCode).toBe(200);
    const events = (body: string) =>
      [...body.matchAll(/<li data-event="([a-z]+)">\s*([^<]*?)\s*<\/li>/g)].map((m) => [
        m[1],
        m[2]!.replace(/\s+/g, ' '),
      ]);
    const t = (offset: number) =>
      new Date(started.json<{ startedAt: number }>().startedAt + offset)
        .toISOString()
        .slice(11, 19);
    expect(events(paused.body)).toEqual([
      ['start', `${t(0)} start`],
      ['step', `${t(0)} step 1 · 25 %`],
      ['step', `${t(60_000)} step 2 · 50 %`],
      ['pause', `${t(120_000)} paused`],
    ]);
    expect(paused.body).toMatch(/status-paused">paused<\/span>\s*at 50 %/);
    expect(paused.body).toContain('<p class="muted">no gates</p>');
    // The reason is the operator's text: shown, never markup.
    expect(paused.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(paused.body).not.toContain('<img');
    // The ramp: 0 % at the start, up to 25 % and 50 % with the steps, flat until now.
    const ramp = paused.body.match(/<polyline\s+points="([^"]+)"/)![1]!.split(' ');
    const ys = ramp.map((point) => Number(point.split(',')[1]));
    expect(new Set(ys).size).toBe(3);
    expect(ys[0]).toBeGreaterThan(ys.at(-1)!);

    await f.send('POST', '/v1/rollouts/ramp:v8%2F1/rollback', op, {});
    const rolledBack = await get(f, '/ui/panels/rollouts', cookie);
    const report = (await f.send('GET', '/v1/rollouts/ramp:v8%2F1/report', op)).json<{
      steps: { moved: number }[];
      rollback: { moved: number };
    }>();
    const moved = report.steps.reduce((sum, step) => sum + step.moved, 0);
    expect(moved).toBeGreaterThan(0);
    const count = (name: string) =>
      rolledBack.body.match(new RegExp(`data-count="${name}"[^>]*>\\s*([^<]*?)\\s*<`))?.[1];
    expect([
      count('moved'),
      count('moved-back'),
      count('staleAttempts'),
      count('staleAccepted'),
    ]).toEqual([String(moved), String(report.rollback.moved), '0', '0']);
    expect(events(rolledBack.body).map(([kind]) => kind)).toEqual([
      'start',
      'step',
      'step',
      'rollback',
      'complete',
    ]);
    expect(rolledBack.body).toContain('status-rolled_back');
    // Back to 0 %: every moved scope is back on v7.
    const back = rolledBack.body.match(/<polyline\s+points="([^"]+)"/)![1]!.split(' ');
    expect(back.at(-1)!.split(',')[1]).toBe(ramp[0]!.split(',')[1]);

    // A finished rollout drops off the panel after a day.
    f.clock.advance(24 * 3_600_000 + 1);
    expect((await get(f, '/ui/panels/rollouts', cookie)).body).toContain(
      'no active or recently finished rollouts',
    );
    // The page itself: the panel polls less often, no inline style, the same policy.
    const page = await get(f, '/ui', cookie);
    expect(page.body).toMatch(/id="panel-rollouts"[^>]*data-every="10000"/);
    expect(page.body).not.toContain('style=');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect((await get(f, '/ui/panels/rollouts')).statusCode).toBe(401);
  });

  it('fails closed when the store is unreachable, and refuses a sign-in posted from another site', async () => {
    let faults: FaultyStore | undefined;
    const f = (fx = await serverFixture({
      wrapStore: (store) => (faults = faultyStore(store)),
    }));
    const cookie = await sessionCookieOf(f, f.tokens.operatorA);
    const foreign = await signIn(f, f.tokens.operatorA, { origin: 'http://evil.invalid' });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.headers['set-cookie']).toBeUndefined();

    faults?.setUnavailable(true);
    const panel = await get(f, '/ui/panels/scopes', cookie);
    expect(panel.statusCode).toBe(503);
    expect(panel.body).toContain('store_unavailable');
    const page = await get(f, '/ui', cookie);
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('store_unavailable');
    expect(page.body).not.toContain('tenant-a');
    faults?.setUnavailable(false);
    expect((await get(f, '/ui/panels/scopes', cookie)).statusCode).toBe(200);
  });

  it('leaves the JSON API as it was: a form body is 415', async () => {
    const f = (fx = await serverFixture());
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/leases/acquire',
      headers: {
        authorization: `Bearer ${f.tokens.workerA}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: form({ scope: 's', holder: 'h', ttlMs: '1000' }),
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });
});
