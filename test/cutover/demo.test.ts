/**
 * `fencegate demo` at a small size on one store (the first of the test list, since the command
 * takes its store by URL and the checks open it again afterwards): exit codes, output, and its
 * invariants re-checked from the store afterwards, including a tampered store that must fail them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runDemo, DEMO_TENANT, type DemoIo } from '../../src/cli/demo-command.js';
import type { IncidentDemoResult } from '../../src/demo/demo-types.js';
import { checkIncident } from '../../src/demo/invariants.js';
import { planIncident } from '../../src/demo/plan.js';
import { loadStoreView } from '../../src/demo/store-view.js';
import { Fencegate } from '../../src/gate.js';
import { ONE_STORE, storesFor } from '../helpers/stores.js';

function captureIo(): DemoIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: (text) => (out += text),
    stderr: (text) => (err += text),
    env: {},
    stderrIsTTY: false,
    out: () => out,
    err: () => err,
  };
}

const SEED = 3;
const WORKFLOWS = 400;
const JOBS = 60;

describe.each(ONE_STORE)('fencegate demo on $name', (kind) => {
  const stores = storesFor(kind, 'cutover_demo');
  /** A fresh, empty store for the demo to fill, by URL. */
  let url = '';
  const args = (): string[] => ['--store', url, '--workflows', `${WORKFLOWS}`, '--jobs', `${JOBS}`];
  beforeAll(async () => {
    const opened = await stores.open();
    url = opened.url;
    await opened.store.close();
  });

  async function openDemoStore(): Promise<Fencegate> {
    return Fencegate.open({ store: await stores.reopen(url), tenant: DEMO_TENANT });
  }

  it('runs the incident and exits 0 with every invariant holding', async () => {
    const io = captureIo();
    expect(await runDemo([...args(), '--seed', `${SEED}`, '--json'], io)).toBe(0);
    const result = JSON.parse(io.out()) as IncidentDemoResult & { storeUrl: string };
    expect(result.ok).toBe(true);
    expect(result.tenant).toBe(DEMO_TENANT);
    expect(result.invariants.length).toBeGreaterThanOrEqual(10);
    expect(result.plan).toEqual({
      running: 8,
      reserved: 12,
      queued: 40,
      resumed: 3,
      delayed: 10,
      retried: 2,
    });
    expect(result.report).toMatchObject({
      status: 'completed',
      staleAccepted: 0,
      staleAttempts: 13,
    });
    expect(result.store.handoffFacts.preserved).toBe(result.store.handoffFacts.required);
    // One progress line per phase on a non-terminal stderr.
    expect(io.err()).toMatch(/^demo: cut 60 workflows over to v8/m);
  });

  it('its invariants hold when re-checked from the store alone', async () => {
    const gate = await openDemoStore();
    const plan = planIncident(SEED, WORKFLOWS, JOBS);
    const { invariants, observations } = checkIncident(await loadStoreView(gate, plan), plan);
    expect(invariants.filter((i) => !i.ok)).toEqual([]);
    expect(observations.resumed).toEqual({ attempted: 3, accepted: 0, rejected: 3 });
    expect(observations.delayed).toEqual({ attempted: 10, accepted: 0, rejected: 10 });
    expect(observations.freshAcquireRefusal).toBe('policy_mismatch');
    expect(observations.v8Scopes).toBe(JOBS);
    expect(await gate.cutoverReport(plan.cutoverId)).toMatchObject({
      staleAccepted: 0,
      liveCommits: JOBS,
    });
    await gate.close();
  });

  it('detects a store where a handoff fact was lost after the controller wrote', async () => {
    const gate = await openDemoStore();
    const plan = planIncident(SEED, WORKFLOWS, JOBS);
    const job = plan.jobs[0]!;
    const scope = (await gate.getScope(job.scope))!;
    const memory = await gate.getRecord(job.scope, 'memory');
    const value = memory.value as { facts: unknown[] };
    // The current holder writes legitimately, but drops a fact: the store accepts it (it holds
    // authority), and the demo's checks must notice both the loss and the second compaction.
    const tampered = await gate.commit({
      scope: job.scope,
      fence: scope.fence,
      operationId: 'tamper',
      writes: [
        {
          name: 'memory',
          expectRevision: memory.revision,
          value: { ...value, facts: value.facts.slice(1) },
        },
      ],
    });
    expect(tampered.outcome).toBe('committed');
    const { invariants } = checkIncident(await loadStoreView(gate, plan), plan);
    const failed = invariants.filter((i) => !i.ok).map((i) => i.name);
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/handoff fact/),
        expect.stringMatching(/exactly once on every affected scope/),
      ]),
    );
    expect(failed.some((name) => /0 of \d+ accepted/.test(name))).toBe(false);
    await gate.close();
  });

  it('refuses a store that already holds the demo and exits 1', async () => {
    const io = captureIo();
    expect(await runDemo(args(), io)).toBe(1);
    expect(io.err()).toMatch(/already holds workflow scopes.*fresh store/);
  });
});

describe('fencegate demo', () => {
  it('prints the table on the embedded store by default', async () => {
    const io = captureIo();
    expect(await runDemo(['--workflows', '200', '--jobs', '30', '--seed', '5'], io)).toBe(0);
    const out = io.out();
    expect(out).toContain('sqlite::memory:');
    expect(out).toMatch(/stale accepted \(report\)\s+0\n/);
    expect(out).toMatch(/handoff facts preserved\s+(\d+)\/\1 in 30\/30 workflows/);
    expect(out).toContain('"staleAccepted": 0');
    expect(out).toMatch(/OK: all \d+ invariants hold/);
  });

  it('says what to do when its store cannot be reached, exit 1', async () => {
    const io = captureIo();
    const unreachable = 'postgres://nobody@127.0.0.1:9/none';
    expect(await runDemo(['--store', unreachable, '--workflows', '10'], io)).toBe(1);
    expect(io.err()).toContain('is unavailable');
    expect(io.err()).toContain('Check that it runs and that --store names it');
    expect(io.err()).toContain('--workflows 1000');
  });

  it('answers --help, and usage errors with exit code 2', async () => {
    const help = captureIo();
    expect(await runDemo(['--help'], help)).toBe(0);
    expect(help.out()).toMatch(/^Usage: fencegate demo/);
    for (const bad of [
      ['--jobs', '0'],
      ['--workflows', '10', '--jobs', '11'],
      ['--seed', '-1'],
      ['--nope'],
      ['--store', 'sqlite:'],
    ]) {
      const io = captureIo();
      expect(await runDemo(bad, io)).toBe(2);
      expect(io.err()).toMatch(/^fencegate demo: /);
    }
  });
});
