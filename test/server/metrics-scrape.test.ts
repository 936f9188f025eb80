/**
 * /metrics needs no token, so a scrape must cost the store nothing: the store's gauges (intents by
 * status, audit violations) are refreshed in the background from the verifier's checkpoint and a
 * scrape only reads them. On every store: scrapes make no store call; on PostgreSQL a scrape
 * answers while the audit horizon lock is held elsewhere. The background verifier's state follows
 * the scopes and records, and a bounded number of delivered effects, not the log's length (its
 * own rule, checked on the in-memory reference store).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundVerifier } from '../../src/audit/background-verifier.js';
import { Fencegate } from '../../src/gate.js';
import { buildServer } from '../../src/server/build-server.js';
import { rolloutPseudonym } from '../../src/server/metrics.js';
import type { Store } from '../../src/store/store.js';
import { faultyStore } from '../../src/testing/faulty-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { withClient } from '../postgres/pg-helpers.js';
import { memoryStore } from '../helpers/memory-store.js';
import { AREA_STORES, storesFor } from '../helpers/stores.js';
import { POSTGRES, skipWithoutPostgres } from '../helpers/stores/postgres.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scrape(app: FastifyInstance): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  return response.body;
}

/** A server whose store gauges refresh once, at start (the next refresh is an hour away). */
async function metricsServer(store: Store, metricsRolloutNames = false): Promise<FastifyInstance> {
  const app = await buildServer({
    store,
    adminToken: 'admin-token-for-metrics-tests',
    storeGauges: { intervalMs: 3_600_000 },
    metricsRolloutNames,
  });
  cleanups.push(() => app.close());
  await app.ready();
  return app;
}

let unique = 0;

/** `commits` writes of one record of one scope, carrying `intents` intents, all delivered. */
async function history(gate: Fencegate, commits: number, intents: number): Promise<void> {
  const grant = await gate.acquire({ scope: 'wf-1', holder: 'w1', ttlMs: 3_600_000 });
  let n = 0;
  for (let i = 0; i < commits; i++) {
    const batch = Math.min(16, Math.max(0, intents - n));
    n += batch;
    const { revision } = await gate.getRecord('wf-1', 'summary');
    const result = await gate.commit({
      scope: 'wf-1',
      fence: grant.fence,
      operationId: `op-${++unique}`,
      writes: [{ name: 'summary', expectRevision: revision, value: { i } }],
      intents: Array.from({ length: batch }, () => ({
        effectKey: `fx-${++unique}`,
        target: 'crm',
        payload: {},
      })),
    });
    expect(result.outcome).toBe('committed');
  }
  for (;;) {
    const claimed = await gate.claimIntents({ dispatcher: 'd1', ttlMs: 60_000, limit: 1000 });
    if (claimed.length === 0) break;
    for (const intent of claimed) {
      await gate.completeIntent(intent.effectKey, {
        claimFence: intent.claimFence,
        outcome: 'delivered',
      });
    }
  }
}

describe.each(AREA_STORES)('/metrics on $name', (kind) => {
  const stores = storesFor(kind, 'metrics_scrape');

  it('a scrape reads gauges refreshed in the background and makes no store call', async () => {
    const { store: inner } = await stores.open();
    cleanups.push(() => inner.close());
    const gate = await Fencegate.open({ store: inner });
    await history(gate, 3, 5);
    const store = faultyStore(inner);
    const app = await metricsServer(store);
    // The first refresh counts intents and verifies the log side by side: wait for both.
    const refreshed = (text: string) =>
      /^fencegate_verify_checked_entries [1-9]/m.test(text) && /^fencegate_intents\{/m.test(text);
    let text = await scrape(app);
    while (!refreshed(text)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      text = await scrape(app);
    }
    expect(text).toMatch(/^fencegate_verify_violations 0$/m);
    expect(text).toMatch(/^fencegate_intents\{status="delivered"\} 5$/m);
    const before = store.calls.length;
    for (let i = 0; i < 5; i++) await scrape(app);
    // The rollout driver looks for work on its own timer, not on a scrape: its calls don't count.
    const byScrape = store.calls.slice(before).filter((c) => c.method !== 'nextRolloutTenant');
    expect(byScrape).toEqual([]);
  });
});

describe.each(AREA_STORES)('rollout gauges on $name', (kind) => {
  const stores = storesFor(kind, 'metrics_rollouts');

  it('shows per tenant the scopes each step and the rollback moved, the stale attempts after it and none accepted; a rollout finished long ago is not shown; without names, no tenant or rollout id', async () => {
    const clock = new ManualClock(1_800_000_000_000);
    const { store } = await stores.open({ clock });
    cleanups.push(() => store.close());
    const base = await Fencegate.open({ store });
    const ramp = async (tenant: string, rolloutId: string) => {
      const gate = base.forTenant(tenant);
      await gate.registerPolicy({ version: 'v7' });
      await gate.registerPolicy({ version: 'v8' });
      for (let i = 0; i < 8; i++) {
        const scope = `wf-${i}`;
        const grant = await gate.acquire({
          scope,
          holder: 'v7',
          ttlMs: 60_000,
          policyVersion: 'v7',
        });
        await gate.release({ scope, holder: 'v7', fence: grant.fence });
      }
      await gate.rollouts.start({
        rolloutId,
        fromPolicy: 'v7',
        toPolicy: 'v8',
        prefix: 'wf-',
        steps: [50],
      });
      return gate;
    };
    const old = await ramp('old-tenant', 'old');
    await old.rollouts.promote({ rolloutId: 'old' });
    clock.advance(2 * 86_400_000);
    // The same rollout id in another tenant, still running: its own series, never added in.
    await ramp('other', 'ramp');
    const gate = await ramp('default', 'ramp');
    const moved = (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items.filter(
      (scope) => scope.policyVersion === 'v8',
    );
    expect(moved.length).toBeGreaterThan(0);
    const job = await gate.acquire({
      scope: moved[0]!.scope,
      holder: 'v8',
      ttlMs: 60_000,
      policyVersion: 'v8',
    });
    await gate.rollouts.rollback({ rolloutId: 'ramp' });
    const late = await gate.commit({
      scope: job.scope,
      fence: job.fence,
      operationId: 'late',
      writes: [],
    });
    expect(late.outcome).toBe('rejected');

    const named = await scrapeRollouts(await metricsServer(store, true));
    const line = (metric: string, labels: string, value: number) =>
      expect(named).toMatch(
        new RegExp(`^fencegate_rollout_${metric}\\{${labels}\\} ${value}$`, 'm'),
      );
    line('scopes_moved', 'tenant="default",rollout="ramp",step="1"', moved.length);
    line('scopes_moved', 'tenant="default",rollout="ramp",step="rollback"', moved.length);
    line('percent', 'tenant="default",rollout="ramp"', 50);
    line('stale_attempts', 'tenant="default",rollout="ramp"', 1);
    line('stale_accepted', 'tenant="default",rollout="ramp"', 0);
    // The hash admits the same scopes under the same id: the other tenant moved as many.
    line('scopes_moved', 'tenant="other",rollout="ramp",step="1"', moved.length);
    line('percent', 'tenant="other",rollout="ramp"', 50);
    expect(named).not.toMatch(/tenant="other",rollout="ramp",step="rollback"/);
    // Finished two days ago: past the day a finished rollout stays shown.
    expect(named).not.toMatch(/rollout="old"/);

    // The default: a pseudonym per tenant and rollout, no tenant or rollout id on the scrape.
    const hidden = await scrapeRollouts(await metricsServer(store));
    const pseudonym = rolloutPseudonym('default', 'ramp');
    expect(pseudonym).toMatch(/^[0-9a-f]{16}$/);
    expect(rolloutPseudonym('other', 'ramp')).not.toBe(pseudonym);
    expect(hidden).toMatch(
      new RegExp(`^fencegate_rollout_stale_accepted\\{rollout="${pseudonym}"\\} 0$`, 'm'),
    );
    const rolloutLines = hidden.split('\n').filter((l) => l.startsWith('fencegate_rollout_'));
    expect(rolloutLines.length).toBeGreaterThan(0);
    for (const l of rolloutLines) expect(l).not.toMatch(/ramp|default|other|tenant=/);
  });
});

/** The scrape once the background refresh that starts with the server has read the rollouts. */
async function scrapeRollouts(app: FastifyInstance): Promise<string> {
  let text = await scrape(app);
  while (!/^fencegate_rollout_percent/m.test(text)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    text = await scrape(app);
  }
  return text;
}

// What the background verifier keeps is its own rule, the same over any store's audit pages.
describe('the background verifier', () => {
  it('stays bounded as the log grows', async () => {
    const store = memoryStore();
    cleanups.push(() => store.close());
    const gate = await Fencegate.open({ store });
    const verifier = new BackgroundVerifier(store, { maxDeliveredEffects: 20 });
    await history(gate, 10, 60);
    await verifier.runOnce();
    const first = verifier.trackedState;
    expect(first).toEqual({ scopes: 1, records: 1, deliveredEffects: 20 });
    const checkedFirst = verifier.checked;
    // Three times the log: the same scope and record, more delivered effects.
    await history(gate, 30, 120);
    await verifier.runOnce();
    expect(verifier.checked).toBeGreaterThan(checkedFirst * 2);
    expect(verifier.trackedState).toEqual(first);
    expect(verifier.violations).toBe(0);
  });
});

// The audit horizon lock is PostgreSQL's (an advisory lock); the other stores have none to hold.
describe.skipIf(skipWithoutPostgres())('/metrics on postgres', () => {
  const stores = storesFor(POSTGRES, 'metrics_scrape_lock');

  it('a scrape answers while the audit horizon lock is held: it takes no lock', async () => {
    const { store, url } = await stores.open();
    cleanups.push(() => store.close());
    const app = await metricsServer(store);
    const schema = new URL(url).searchParams.get('schema')!;
    await withClient(url, async (client) => {
      // A writer in flight holds the audit lock shared: audit_horizon() waits for it.
      await client.query('BEGIN');
      await client.query(
        `SELECT pg_advisory_xact_lock_shared(hashtextextended('fencegate.audit:${schema}', 0))`,
      );
      const answered = await Promise.race([
        scrape(app).then(() => 'answered'),
        new Promise((resolve) => setTimeout(() => resolve('blocked'), 5000)),
      ]);
      await client.query('ROLLBACK');
      expect(answered).toBe('answered');
    });
  });
});
