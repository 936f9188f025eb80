/**
 * The dashboard in a real browser (Debian chromium), on a server over PostgreSQL: sign in, a stale
 * rejection appearing after a takeover, a cutover watched while one of its chunks waits on a row
 * lock and then when it completes, a rollout its driver paused on a gate over its limit (the gate's
 * readings drawn against the limit) and a rolled-back one charted with nothing refused by the
 * Content-Security-Policy, hostile names and values shown and never run, sign-out,
 * and a deleted token ending the open page's session. Each panel's screenshot goes to a temporary folder,
 * or to docs/dashboard/ with FENCEGATE_UPDATE_SCREENSHOTS=1 (a test run leaves the tree as it was).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import { RolloutDriver } from '../../src/rollout/driver.js';
import { buildServer } from '../../src/server/build-server.js';
import { hashToken, issueToken } from '../../src/server/tokens.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { StartRolloutRequest } from '../../src/types.js';
import { dropSchema, pgUrl, testSchema, withClient } from '../postgres/pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';
import { launchChromium, skipWithoutChromium, type Browser } from './browser.js';

/** Skipped, and reported, on a machine without Chromium or PostgreSQL. */
const skipped = skipWithoutChromium() || skipWithoutPostgres();

const SHOTS =
  process.env.FENCEGATE_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/dashboard/', import.meta.url))
    : `${mkdtempSync(join(tmpdir(), 'fencegate-shots-'))}/`;
const ADMIN = `admin-${'x'.repeat(24)}`;
const TENANT = 'acme';
const HOSTILE = '<img src=x onerror=alert(1)>';
const HOSTILE_SCOPES = ['javascript:x', '//evil.invalid/@x', 'x/../../v1/admin/tokens'];
const CUTOVER_SCOPES = 1500;
/** The canary's error rate at each of its driver's looks: the last is over its gate's 0.05. */
const ERROR_RATES = [0.012, 0.018, 0.016, 0.027, 0.034, 0.041, 0.072];
/** Panels poll every 2 s; verify every 10 s. */
const SEEN = { timeout: 15_000 };

const schema = testSchema('dashboard_browser');
let store: PostgresStore;
let app: FastifyInstance;
let url: string;
let browser: Browser;
let operatorToken: string;
let operator: FencegateClient;
let worker: FencegateClient;
const dialogs: string[] = [];

beforeAll(async () => {
  store = await PostgresStore.open({ url: pgUrl(), schema });
  app = await buildServer({ store, adminToken: ADMIN, metricSources: ['errors'] });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  operatorToken = (await issueToken(store, { tenant: TENANT, role: 'operator' })).token;
  const workerToken = (await issueToken(store, { tenant: TENANT, role: 'worker' })).token;
  operator = new FencegateClient({ url, token: operatorToken });
  worker = new FencegateClient({ url, token: workerToken });
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await store?.close();
  await dropSchema(pgUrl(), schema);
});

async function shot(page: Page, panel: string, file: string): Promise<void> {
  await page.locator(`#panel-${panel}`).screenshot({ path: `${SHOTS}${file}.png` });
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${url}/`);
  expect(page.url()).toBe(`${url}/ui`);
  await page.fill('#token', operatorToken);
  await page.click('button[type=submit]');
  await expect.poll(() => page.locator('.tenant b').textContent()).toBe(TENANT);
}

/** Scopes with hostile names, records and intents with hostile values. */
async function seedHostileData(): Promise<void> {
  for (const [i, scope] of HOSTILE_SCOPES.entries()) {
    const grant = await worker.acquire({ scope, holder: 'w1', ttlMs: 600_000 });
    const result = await worker.commit({
      scope,
      fence: grant.fence,
      operationId: `hostile-${i}`,
      writes: [{ name: 'note', expectRevision: 0, value: { text: HOSTILE } }],
      intents: [{ effectKey: `notify-${i}`, target: 'crm', payload: { html: HOSTILE } }],
    });
    expect(result.outcome).toBe('committed');
  }
  const claimed = await worker.claimIntents({ dispatcher: 'd1', ttlMs: 60_000, limit: 10 });
  expect(claimed).toHaveLength(3);
  const [first, second] = claimed;
  await worker.completeIntent(first!.effectKey, {
    claimFence: first!.claimFence,
    outcome: 'unknown',
    error: HOSTILE,
  });
  await worker.completeIntent(second!.effectKey, {
    claimFence: second!.claimFence,
    outcome: 'needs_attention',
    error: 'the provider refused the address',
  });
}

describe.skipIf(skipped)('the dashboard in chromium', () => {
  it('signs in, shows live data safely, watches a cutover, signs out, and ends on revocation', async () => {
    const page = await browser.context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // Chromium reports what the Content-Security-Policy refused (an inline style, say).
    const cspViolations: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) cspViolations.push(message.text());
    });
    await seedHostileData();

    await page.goto(`${url}/`);
    await page.locator('form').screenshot({ path: `${SHOTS}sign-in.png` });
    await signIn(page);
    const cookies = await browser.context.cookies(`${url}/ui`);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({
      name: 'fencegate_session',
      httpOnly: true,
      sameSite: 'Strict',
    });
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(page.url()).not.toContain(operatorToken);

    // Hostile names are text, and their links are encoded path segments.
    const scopes = page.locator('#panel-scopes');
    for (const scope of HOSTILE_SCOPES) {
      const link = scopes.getByRole('link', { name: scope, exact: true });
      expect(await link.getAttribute('href')).toBe(`/ui/scopes/${encodeURIComponent(scope)}`);
    }
    await shot(page, 'scopes', 'scopes');
    const intents = page.locator('#panel-intents');
    await expect.poll(() => intents.locator('tbody tr').first().textContent()).toContain(HOSTILE);
    expect(await intents.locator('tbody tr td.status-unknown').first().textContent()).toBe(
      'unknown',
    );
    expect(await intents.locator('img').count()).toBe(0);
    await shot(page, 'intents', 'intents');

    // A worker loses its scope to a takeover; its late commit is refused and shows up.
    const grant = await worker.acquire({ scope: 'wf-1/memory', holder: 'w1', ttlMs: 600_000 });
    await operator.takeover('wf-1/memory', { holder: 'operator', reason: HOSTILE });
    const late = await worker.commit({
      scope: 'wf-1/memory',
      fence: grant.fence,
      operationId: 'late-1',
      writes: [{ name: 'memory', expectRevision: 0, value: 'late' }],
    });
    expect(late).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });
    const staleCells = page.locator('#panel-activity td[data-reason="stale_fence"]');
    await expect
      .poll(
        async () => (await staleCells.allTextContents()).map(Number).reduce((a, b) => a + b, 0),
        SEEN,
      )
      .toBe(1);

    // The first screen answers "is anything wrong?": the summary strip, above the fold.
    const rejected = page.locator('#panel-summary [data-figure="rejected_10_min"] .big');
    await expect.poll(async () => rejected.textContent(), SEEN).toBe('1');
    await page.evaluate('window.scrollTo(0, 0)');
    const strip = await page.locator('#panel-summary').boundingBox();
    expect(strip).not.toBeNull();
    expect(strip!.y).toBeGreaterThanOrEqual(0);
    expect(strip!.y + strip!.height).toBeLessThan(page.viewportSize()!.height);
    await page.screenshot({ path: `${SHOTS}first-screen.png` });

    // A cutover whose second chunk waits on a row lock held here, then completes.
    await operator.registerPolicy({ version: 'v8', description: HOSTILE });
    const names = Array.from(
      { length: CUTOVER_SCOPES },
      (_, i) => `batch-${String(i).padStart(4, '0')}`,
    );
    const locked = names.at(-1)!;
    await worker.acquire({ scope: locked, holder: 'w2', ttlMs: 600_000 });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let lockTaken: () => void = () => undefined;
    const taken = new Promise<void>((resolve) => (lockTaken = resolve));
    const lock = withClient(pgUrl(), async (client) => {
      await client.query('BEGIN');
      await client.query(
        `SELECT 1 FROM ${schema}.scopes WHERE tenant = $1 AND scope = $2 FOR UPDATE`,
        [TENANT, locked],
      );
      lockTaken();
      await held;
      await client.query('ROLLBACK');
    });
    await taken;
    const cutover = operator.cutover({
      cutoverId: 'co-v8',
      toPolicy: 'v8',
      holder: 'controller-v8',
      scopes: names,
    });
    const card = page.locator('#panel-cutovers article[data-cutover="co-v8"]');
    await expect
      .poll(() => card.locator('.progress').textContent(), SEEN)
      .toBe('1000 / 1500 scopes moved');
    expect(await card.locator('header').textContent()).toContain('running');
    await shot(page, 'cutovers', 'cutover-running');
    release();
    await lock;
    expect((await cutover).scopes).toBe(CUTOVER_SCOPES);
    await expect
      .poll(() => card.locator('.progress').textContent(), SEEN)
      .toBe('1500 / 1500 scopes moved');
    expect(await card.locator('header').textContent()).toContain('completed');
    expect(await card.locator('.stale-accepted .big').textContent()).toBe('0');
    expect(await page.locator('#panel-cutovers .policies .description').textContent()).toBe(
      HOSTILE,
    );
    expect(await page.locator('#panel-cutovers img').count()).toBe(0);
    await shot(page, 'cutovers', 'cutovers');

    await expect
      .poll(
        async () =>
          (await page.locator('#panel-verify .verdict').textContent())?.replace(/\s+/g, ' ').trim(),
        SEEN,
      )
      .toMatch(/^0 violations in \d+ audit entries checked$/);
    await shot(page, 'verify', 'verify');

    // Two rollouts: a held canary that its driver pauses when its gate goes over its limit, and
    // one rolled back under a v9 job that then commits late.
    await operator.registerPolicy({ version: 'v9' });
    const ramp = (
      rolloutId: string,
      group: string,
      steps: number[],
      extra: Partial<StartRolloutRequest> = {},
    ) =>
      operator.rollouts.start({
        rolloutId,
        fromPolicy: 'v8',
        toPolicy: 'v9',
        scopes: Array.from({ length: 40 }, (_, i) => `ramp-${group}-${String(i).padStart(2, '0')}`),
        steps,
        ...extra,
      });
    const pause = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));
    const back = await ramp('v9-ramp', 'a', [10, 40, 100], { reason: HOSTILE });
    const canary = await ramp('v9-canary', 'b', [5, 20, 100], {
      holdSeconds: 600,
      gates: [{ name: 'errors', metric: 'external', source: 'errors', minSamples: 1, max: 0.05 }],
      onFailure: 'pause',
    });
    await pause();
    await operator.rollouts.advance({ rolloutId: 'v9-ramp', revision: back.revision });
    await operator.rollouts.advance({ rolloutId: 'v9-canary', revision: canary.revision });
    // The driver looks at the canary's second step as `serve` does, reading the error rate from
    // its source: each look's reading joins the step's series, and the last, over 0.05, pauses it.
    const driverErrors: unknown[] = [];
    const driver = new RolloutDriver({
      store,
      holder: 'dashboard-test',
      readSource: (name) =>
        Promise.resolve(name === 'errors' ? (ERROR_RATES[looks] ?? null) : null),
      onError: (error) => driverErrors.push(error),
    });
    let looks = 0;
    for (; looks < ERROR_RATES.length; looks++) {
      await pause(120);
      await driver.tick();
    }
    expect(driverErrors).toEqual([]);
    const onV9 = (await operator.listScopes({ prefix: 'ramp-a-', limit: 100 })).items.find(
      (scope) => scope.policyVersion === 'v9',
    );
    const job = await worker.acquire({
      scope: onV9!.scope,
      holder: 'v9-job',
      ttlMs: 600_000,
      policyVersions: ['v8', 'v9'],
    });
    await pause();
    await operator.rollouts.rollback({ rolloutId: 'v9-ramp' });
    const lateV9 = await worker.commit({
      scope: job.scope,
      fence: job.fence,
      operationId: 'late-v9',
      writes: [{ name: 'memory', expectRevision: 0, value: 'from v9' }],
    });
    expect(lateV9).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });
    // The panel refreshes every 10 s; a reload shows it now.
    await page.reload();
    const rolledBack = page.locator('#panel-rollouts article[data-rollout="v9-ramp"]');
    expect(await rolledBack.locator('.rollout-status').textContent()).toBe('rolled_back');
    expect(await rolledBack.locator('[data-count="staleAttempts"]').textContent()).toMatch(
      /^\s*1\s*$/,
    );
    expect(await rolledBack.locator('[data-count="staleAccepted"]').textContent()).toMatch(
      /^\s*0\s*$/,
    );
    expect(await rolledBack.locator('.reason').textContent()).toBe(HOSTILE);
    expect(await rolledBack.locator('svg.chart g[data-event]').count()).toBe(5);
    expect(await rolledBack.locator('.gates').textContent()).toContain('no gates');
    const paused = page.locator('#panel-rollouts article[data-rollout="v9-canary"]');
    expect(await paused.locator('.rollout-status').textContent()).toBe('paused');
    expect(await paused.locator('.reason').textContent()).toMatch(/^gate errors failed at step 2/);
    // The gate's series: a point per look, the last one red over the dashed limit.
    const errorsGate = paused.locator('.gate[data-gate="errors"]');
    expect(await errorsGate.locator('circle').count()).toBe(ERROR_RATES.length);
    expect(await errorsGate.locator('circle[data-reading="over"]').count()).toBe(1);
    expect(await errorsGate.locator('circle[data-reading="over"]').getAttribute('fill')).toBe(
      '#b3261e',
    );
    expect(
      await errorsGate.locator('[data-limit="0.05"] polyline').getAttribute('stroke-dasharray'),
    ).toBe('4 3');
    // The chart is drawn, and sized by the stylesheet, not by an inline style.
    const chart = await paused.locator('svg.chart').first().boundingBox();
    expect(chart!.width).toBeGreaterThan(300);
    const gateChart = await errorsGate.locator('svg.chart').boundingBox();
    expect(gateChart!.width).toBeGreaterThan(300);
    expect(await page.locator('#panel-rollouts img').count()).toBe(0);
    await shot(page, 'rollouts', 'rollouts');
    await shot(page, 'activity', 'activity');
    expect(cspViolations).toEqual([]);

    // The hostile scope's own page: its name, then its record's value on the record's page, as text.
    await page.fill('#prefix', 'x/');
    await page.click('.filter button');
    expect(page.url()).toBe(`${url}/ui?prefix=x%2F`);
    expect(await scopes.locator('tbody tr').count()).toBe(1);
    await scopes.getByRole('link', { name: 'x/../../v1/admin/tokens', exact: true }).click();
    expect(page.url()).toBe(`${url}/ui/scopes/x%2F..%2F..%2Fv1%2Fadmin%2Ftokens`);
    expect(await page.locator('h2 .name').textContent()).toBe('x/../../v1/admin/tokens');
    await page.getByRole('link', { name: 'note', exact: true }).click();
    expect(page.url()).toBe(`${url}/ui/scopes/x%2F..%2F..%2Fv1%2Fadmin%2Ftokens/records/note`);
    expect(await page.locator('main .value').textContent()).toContain(HOSTILE);
    expect(await page.locator('main img').count()).toBe(0);

    // Sign out: the cookie is gone and the panels answer 401.
    await page.click('#sign-out');
    await page.waitForSelector('#token');
    expect(await browser.context.cookies(`${url}/ui`)).toEqual([]);
    expect(await page.evaluate(() => fetch('/ui/panels/scopes').then((r) => r.status))).toBe(401);

    // Signed in again, then the token is deleted: the open page falls back to sign-in.
    await signIn(page);
    const tokens = await store.findToken(hashToken(operatorToken));
    const deleted = await fetch(`${url}/v1/admin/tokens/${tokens!.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(deleted.status).toBe(200);
    await page.waitForSelector('#token', SEEN);
    expect(dialogs).toEqual([]);
    await page.close();
  }, 90_000);
});
