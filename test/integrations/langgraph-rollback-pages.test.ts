/**
 * runThread's `rollback` report over a run that committed more intents than one page of
 * cancelIntents looks at: every pending one is cancelled, page after page, and the report's
 * cancelled, delivered, in-flight and failed lists add up to every intent the run committed.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CANCEL_INTENTS_PAGE } from '../../src/core/cancel-intents-page.js';
import { Fencegate } from '../../src/gate.js';
import { settleRolledBackIntents } from '../../src/integrations/langgraph/rollback-intents.js';

const SCOPE = 'langgraph/rollback-pages';
/** More than two pages, 16 (the most one commit carries) to a commit. */
const COMMITS = 8;
const PER_COMMIT = 16;

let gate: Fencegate;

beforeEach(async () => {
  gate = await Fencegate.open({ store: 'sqlite::memory:' });
});

afterEach(async () => {
  expect((await gate.verify()).violations).toEqual([]);
  await gate.close();
});

it("rollback: the report adds up over every page of the undone run's intents", async () => {
  const run = await gate.acquire({ scope: SCOPE, holder: 'run-1', ttlMs: 60_000 });
  const keys: string[] = [];
  const commits = Array.from({ length: COMMITS }, (_, commit) => ({
    scope: SCOPE,
    fence: run.fence,
    operationId: `rollback-pages-${commit}`,
    intents: Array.from({ length: PER_COMMIT }, (_, i) => {
      const effectKey = `effect-${String(commit * PER_COMMIT + i).padStart(3, '0')}`;
      keys.push(effectKey);
      // Three of them go to a dispatcher before the rollback.
      const target = ['effect-010', 'effect-060', 'effect-110'].includes(effectKey)
        ? 'mail'
        : 'crm';
      return { effectKey, target, payload: {} };
    }),
  }));
  for (const item of await gate.commitMany(commits)) {
    expect(item.ok && item.result.outcome).toBe('committed');
  }
  const taken = await gate.claimIntents({
    dispatcher: 'd1',
    ttlMs: 60_000,
    limit: 3,
    targets: ['mail'],
  });
  const claimFence = (effectKey: string) =>
    taken.find((intent) => intent.effectKey === effectKey)!.claimFence;
  await gate.completeIntent('effect-010', {
    claimFence: claimFence('effect-010'),
    outcome: 'delivered',
  });
  await gate.completeIntent('effect-060', {
    claimFence: claimFence('effect-060'),
    outcome: 'failed',
    retryable: false,
    error: 'refused',
  });
  const next = await gate.takeover(SCOPE, { holder: 'run-2', ttlMs: 60_000 });

  const report = await settleRolledBackIntents({
    gate,
    scope: SCOPE,
    holder: 'run-2',
    fence: next.fence,
    rolledBackFence: run.fence,
  });

  const taken3 = ['effect-010', 'effect-060', 'effect-110'];
  expect(keys.length).toBeGreaterThan(2 * CANCEL_INTENTS_PAGE);
  expect(report.cancelled).toEqual(keys.filter((key) => !taken3.includes(key)));
  expect(report.delivered.map((intent) => intent.effectKey)).toEqual(['effect-010']);
  expect(report.failed.map((intent) => intent.effectKey)).toEqual(['effect-060']);
  expect(report.inFlight.map((intent) => intent.effectKey)).toEqual(['effect-110']);
  expect(
    report.cancelled.length +
      report.delivered.length +
      report.failed.length +
      report.inFlight.length,
  ).toBe(keys.length);
  const pending = await gate.listIntents({ scope: SCOPE, status: 'pending' });
  expect(pending.items).toEqual([]);
});
