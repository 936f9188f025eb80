/**
 * Rollouts from the command line, over HTTP with an operator token: start, status, advance, a
 * report per step, a rollback that fences out the new version's in-flight job, and the report
 * after it with staleAccepted 0; pause, resume and promote. Usage mistakes exit 2, refusals 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencegateClient } from '../../src/client/index.js';
import type { RunningServer } from '../../src/server/start-server.js';
import type { Rollout, RolloutReport } from '../../src/types.js';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { operatorServer } from '../helpers/operator-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('fencegate-cli-rollout-');
const SCOPES = Array.from({ length: 20 }, (_, i) => `wf-${i}/memory`);
let server: RunningServer;
let env: Record<string, string>;
let gate: FencegateClient;

/** v7 and v8 registered; every scope created on v7 and released, as finished v7 jobs leave it. */
beforeAll(async () => {
  ({ server, env } = await operatorServer(dir.path, 'acme'));
  gate = new FencegateClient({ url: env.FENCEGATE_URL!, token: env.FENCEGATE_TOKEN! });
  await gate.registerPolicy({ version: 'v7' });
  await gate.registerPolicy({ version: 'v8' });
  for (const scope of SCOPES) {
    const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
    await gate.release({ scope, holder: 'v7', fence: grant.fence });
  }
});

afterAll(async () => {
  await server.close();
  dir.cleanup();
});

function cli(...argv: string[]) {
  return inProcessCli(argv, env);
}

describe('fencegate rollout', () => {
  it('starts, advances, reports per step, rolls back, and reports staleAccepted 0', async () => {
    const started = await cli(
      ...['rollout', 'start', 'v8-ramp', '--from', 'v7', '--to', 'v8'],
      ...['--prefix', 'wf-', '--steps', '25,50,100', '--json'],
    );
    expect(started).toMatchObject({ code: 0, stderr: '' });
    const rollout = JSON.parse(started.stdout) as Rollout;
    expect(rollout).toMatchObject({ status: 'running', step: 1, percent: 25, revision: 1 });

    const shown = await cli('rollout', 'status', 'v8-ramp');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('v8-ramp: running at 25 % (step 1 of 3: 25, 50, 100)');
    expect(shown.stdout).toContain('v7 -> v8, prefix wf-, revision 1, cutover v8-ramp/step-1 done');

    // A v8 job holds a ramped scope and commits on it.
    const ramped = (await gate.listScopes({ prefix: 'wf-', limit: 100 })).items.find(
      (scope) => scope.policyVersion === 'v8',
    )!;
    const job = await gate.acquire({
      scope: ramped.scope,
      holder: 'v8-job',
      ttlMs: 60_000,
      policyVersions: ['v7', 'v8'],
    });
    const write = (operationId: string, expectRevision: number) =>
      gate.commit({
        scope: job.scope,
        fence: job.fence,
        operationId,
        writes: [{ name: 'summary', expectRevision, value: 'from v8' }],
      });
    expect((await write('v8-write', 0)).outcome).toBe('committed');
    // The queue reports the job running under the scope's new fence: a v8 job of step 1.
    await gate.recordJobEvents([
      {
        jobId: 'v8-job',
        scope: job.scope,
        policyVersion: 'v8',
        fence: job.fence,
        state: 'running',
        attempt: 1,
      },
    ]);

    const advanced = await cli('rollout', 'advance', 'v8-ramp', '--revision', '1');
    expect(advanced.code).toBe(0);
    expect(advanced.stdout).toContain('advanced v8-ramp: running at 50 % (step 2 of 3');
    // Revision 1 is gone: the same command again is refused and changes nothing.
    const stale = await cli('rollout', 'advance', 'v8-ramp', '--revision', '1');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('fencegate rollout advance: rollout_conflict:');

    const ramping = await cli('rollout', 'report', 'v8-ramp');
    expect(ramping.code).toBe(0);
    // moved, skipped 0, commits accepted 1, pinned at acquire 0, unknown outcomes 0, v8 jobs 1
    expect(ramping.stdout).toMatch(
      /1\s+v8-ramp\/step-1\s+25 %\s+completed\s+\d+\s+0\s+1\s+0\s+0\s+1\n/,
    );
    expect(ramping.stdout).toMatch(/v8 jobs: 1 \(running 1\)/);
    expect(ramping.stdout).toMatch(/2\s+v8-ramp\/step-2\s+50 %\s+completed/);
    expect(ramping.stdout).toContain('rollback: none');

    const rolledBack = await cli('rollout', 'rollback', 'v8-ramp', '--cancel-intents');
    expect(rolledBack.code).toBe(0);
    expect(rolledBack.stdout).toContain('rolled back v8-ramp: rolled_back');
    // The v8 job's late write is refused: the rollback gave its scope a new fence.
    const late = await write('v8-late', 1);
    expect(late).toMatchObject({ outcome: 'rejected', error: { code: 'stale_fence' } });

    const after = await cli('rollout', 'report', 'v8-ramp');
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('stale attempts 1, staleAccepted 0 (must be 0)');
    const json = await cli('rollout', 'report', 'v8-ramp', '--json');
    const report = JSON.parse(json.stdout) as RolloutReport;
    expect(report.rollback).toMatchObject({
      status: 'completed',
      staleAttempts: 1,
      staleAccepted: 0,
    });
    expect(report.rollback?.moved).toBe(report.steps.reduce((sum, step) => sum + step.moved, 0));
    // Each step's own figures come over HTTP, and the rollout's are their sums.
    const overSteps = (figure: (step: RolloutReport['steps'][number]) => number) =>
      report.steps.reduce((sum, step) => sum + figure(step), 0);
    expect(overSteps((step) => step.pinnedAtAcquire)).toBe(report.pinnedAtAcquire);
    expect(overSteps((step) => step.unknownOutcomes)).toBe(report.unknownOutcomes);
    expect(overSteps((step) => step.toPolicyJobs.total)).toBe(report.toPolicyJobs.total);
    expect(report.steps[0]?.toPolicyJobs).toMatchObject({ total: 1, byState: { running: 1 } });

    const listed = await cli('rollout', 'status', '--json');
    expect(JSON.parse(listed.stdout)).toMatchObject({
      items: [{ rolloutId: 'v8-ramp', status: 'rolled_back' }],
    });
    const missing = await cli('rollout', 'status', 'no-such');
    expect(missing).toMatchObject({ code: 1, stdout: 'no rollout no-such\n' });
    expect((await cli('rollout', 'report', 'no-such')).code).toBe(1);
  });

  it('pauses, resumes at the current revision and promotes, each printing the new state; while paused, advance and a resume at an old revision are refused with exit 1 and change nothing', async () => {
    // A selection of its own, beside the one the case above ramped.
    const scopes = Array.from({ length: 10 }, (_, i) => `canary-${i}/memory`);
    for (const scope of scopes) {
      const grant = await gate.acquire({ scope, holder: 'v7', ttlMs: 60_000, policyVersion: 'v7' });
      await gate.release({ scope, holder: 'v7', fence: grant.fence });
    }
    const onV8 = async () =>
      (await gate.listScopes({ prefix: 'canary-', limit: 100 })).items
        .filter((scope) => scope.policyVersion === 'v8')
        .map((scope) => scope.scope);
    const status = async () => {
      const shown = await cli('rollout', 'status', 'canary', '--json');
      expect(shown.code).toBe(0);
      return JSON.parse(shown.stdout) as Rollout;
    };
    const line = (state: string, step: number, revision: number, cutover: string) =>
      `canary: ${state} (step ${step} of 2: 40, 75), v7 -> v8, prefix canary-, ` +
      `revision ${revision}, cutover ${cutover} done\n`;

    const started = await cli(
      ...['rollout', 'start', 'canary', '--from', 'v7', '--to', 'v8'],
      ...['--prefix', 'canary-', '--steps', '40,75'],
    );
    expect(started).toEqual({
      code: 0,
      stdout: `started ${line('running at 40 %', 1, 1, 'canary/step-1')}`,
      stderr: '',
    });
    const ramped = await onV8();
    expect(ramped.length).toBeGreaterThan(0);

    const paused = await cli('rollout', 'pause', 'canary', '--revision', '1');
    expect(paused).toEqual({
      code: 0,
      stdout: `paused ${line('paused at 40 %', 1, 2, 'canary/step-1')}`,
      stderr: '',
    });
    expect(await status()).toMatchObject({ status: 'paused', step: 1, percent: 40, revision: 2 });

    // No step advances until resume.
    const advance = await cli('rollout', 'advance', 'canary');
    expect(advance).toMatchObject({ code: 1, stdout: '' });
    expect(advance.stderr).toMatch(/^fencegate rollout advance: rollout_conflict: .*paused/);
    // A resume made on the revision read before the pause is refused with where the rollout is.
    const stale = await cli('rollout', 'resume', 'canary', '--revision', '1', '--json');
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout)).toMatchObject({
      error: { code: 'rollout_conflict', details: { status: 'paused', revision: 2 } },
    });
    expect(stale.stderr).toMatch(/^fencegate rollout resume: rollout_conflict: /);
    expect(await status()).toMatchObject({ status: 'paused', step: 1, percent: 40, revision: 2 });
    expect(await onV8()).toEqual(ramped);

    const resumed = await cli('rollout', 'resume', 'canary', '--revision', '2');
    expect(resumed).toEqual({
      code: 0,
      stdout: `resumed ${line('running at 40 %', 1, 3, 'canary/step-1')}`,
      stderr: '',
    });
    expect(await status()).toMatchObject({ status: 'running', step: 1, percent: 40, revision: 3 });
    expect(await onV8()).toEqual(ramped);

    // Past the 75 % step to 100 % in one step; the completion is a change of its own.
    const promoted = await cli('rollout', 'promote', 'canary', '--revision', '3');
    expect(promoted).toEqual({
      code: 0,
      stdout: `promoted ${line('completed at 100 %', 2, 5, 'canary/step-2')}`,
      stderr: '',
    });
    expect(await status()).toMatchObject({ status: 'completed', step: 2, percent: 100 });
    expect(await onV8()).toEqual(scopes);
    const report = (await gate.rollouts.report('canary'))!;
    expect(report.steps.map((step) => [step.cutoverId, step.percent, step.moved])).toEqual([
      ['canary/step-1', 40, ramped.length],
      ['canary/step-2', 100, scopes.length - ramped.length],
    ]);
  });

  it('answers usage mistakes with exit 2 and the usage, and changes nothing', async () => {
    const start = ['rollout', 'start', 'bad', '--from', 'v7', '--to', 'v8'];
    const mistakes: [string[], string][] = [
      [[...start, '--prefix', 'wf-'], '--steps is required'],
      [[...start, '--prefix', 'wf-', '--steps', '5,x'], '--steps must be whole percentages'],
      [[...start, '--steps', '50'], 'give the selection as --prefix P or as --scope S'],
      [[...start, '--prefix', 'wf-', '--scope', 'wf-1/memory', '--steps', '50'], 'not both'],
      // Checked by the server, in the library's words.
      [[...start, '--prefix', 'wf-', '--steps', '50,25'], 'steps must increase'],
      [['rollout', 'start', 'bad', '--to', 'v8', '--prefix', 'wf-', '--steps', '5'], '--from'],
      [['rollout', 'advance'], 'ROLLOUT_ID is missing'],
      [['rollout', 'pause', 'v8-ramp', '--revision', '0'], '--revision must be an integer from 1'],
      [['rollout', 'status', 'a', 'b'], 'expected only ROLLOUT_ID'],
      [['rollout', 'rollback', 'v8-ramp', '--cancel'], "Unknown option '--cancel'"],
    ];
    for (const [argv, message] of mistakes) {
      const run = await cli(...argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr, argv.join(' ')).toContain(message);
      expect(run.stderr, argv.join(' ')).toContain(`Usage: fencegate ${argv[0]} ${argv[1]}`);
    }
    expect(await gate.rollouts.get('bad')).toBeNull();
  });

  it('lists the rollout commands in the help, each with its own --help', async () => {
    const top = await cli('--help');
    for (const command of ['start', 'status', 'advance', 'pause', 'resume', 'promote']) {
      expect(top.stdout).toContain(`fencegate rollout ${command} `);
    }
    expect(top.stdout).toMatch(/fencegate rollout rollback\s+move every scope/);
    expect(top.stdout).toMatch(/fencegate rollout report\s+a rollout's report/);
    const help = await cli('rollout', 'start', '--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain(
      'Usage: fencegate rollout start ROLLOUT_ID --from V --to V (--prefix P | --scope S...)',
    );
    expect((await cli('rollout', 'rollback', '-h')).stdout).toContain('--cancel-intents');
  });
});
