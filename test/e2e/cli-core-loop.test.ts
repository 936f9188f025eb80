/**
 * The core loop from the command line, over HTTP with a token: acquire, commit, a stale commit
 * after a takeover, the stored outcome, the audit log, release. Readable output by default, JSON
 * with --json; exit 0 committed or done, 1 rejected, 2 usage, 3 outcome unknown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/start-server.js';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { operatorServer } from '../helpers/operator-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('fencegate-cli-loop-');
let server: RunningServer;
let env: Record<string, string>;

beforeAll(async () => {
  ({ server, env } = await operatorServer(dir.path, 'acme'));
});

afterAll(async () => {
  await server.close();
  dir.cleanup();
});

function cli(...argv: string[]) {
  return inProcessCli(argv, env);
}

describe('the core loop from the command line', () => {
  it('acquires, commits, refuses a stale commit after a takeover, and shows outcome and audit', async () => {
    const acquired = await cli('acquire', 'wf-1/memory', '--holder', 'worker-a', '--json');
    expect(acquired.code).toBe(0);
    const grant = JSON.parse(acquired.stdout) as { fence: number; holder: string };
    expect(grant).toMatchObject({ fence: 1, holder: 'worker-a' });

    const write = ['--write', 'summary@0={"facts":["handoff"]}'];
    const committed = await cli('commit', 'wf-1/memory', '--fence', '1', '--op', 'c-1', ...write);
    expect(committed).toMatchObject({ code: 0, stderr: '' });
    expect(committed.stdout).toContain('committed c-1 on wf-1/memory at fence 1: summary r1');

    const taken = await cli('takeover', 'wf-1/memory', '--holder', 'worker-b');
    expect(taken.code).toBe(0);
    expect(taken.stdout).toContain('took over wf-1/memory: fence 2, holder worker-b');

    const stale = await cli(
      ...['commit', 'wf-1/memory', '--fence', '1', '--op', 'c-2'],
      ...['--write', 'summary@1="late"'],
    );
    expect(stale.code).toBe(1);
    expect(stale.stdout).toContain('rejected c-2: stale_fence');

    const outcome = await cli('outcome', 'c-2', '--json');
    expect(outcome.code).toBe(1);
    expect(JSON.parse(outcome.stdout)).toMatchObject({
      outcome: 'rejected',
      error: { code: 'stale_fence' },
    });
    expect((await cli('outcome', 'c-1')).stdout).toContain('committed c-1');
    const never = await cli('outcome', 'never-sent');
    expect(never.code).toBe(3);
    expect(never.stdout).toContain('no outcome stored for never-sent');

    const record = await cli('record', 'wf-1/memory', 'summary');
    expect(record.stdout).toContain('revision 1');
    expect(record.stdout).toContain('{"facts":["handoff"]}');
    const scope = await cli('scope', 'wf-1/memory');
    expect(scope.stdout).toContain('fence 2, holder worker-b');

    const audit = await cli('audit', '--scope', 'wf-1/memory');
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/commit\s+committed\s+fence 1\s+c-1/);
    expect(audit.stdout).toMatch(/commit\s+rejected\s+fence 1\s+c-2\s+stale_fence/);

    const released = await cli('release', 'wf-1/memory', '--fence', '2', '--holder', 'worker-b');
    expect(released).toMatchObject({ code: 0 });
    expect(released.stdout).toContain('released wf-1/memory');
  });

  it('answers usage mistakes with exit 2 and a missing token with what to set', async () => {
    const noWrite = await cli('commit', 'wf-1/memory', '--fence', 'one', '--op', 'x');
    expect(noWrite.code).toBe(2);
    expect(noWrite.stderr).toContain('--fence must be');
    const badWrite = await cli(
      'commit',
      'wf-1/memory',
      '--fence',
      '1',
      '--op',
      'x',
      '--write',
      'a',
    );
    expect(badWrite.code).toBe(2);
    expect(badWrite.stderr).toContain('NAME@REVISION=JSON');
    const saved = env;
    env = { FENCEGATE_URL: saved.FENCEGATE_URL! };
    const tokenless = await cli('scope', 'wf-1/memory');
    env = saved;
    expect(tokenless.code).toBe(2);
    expect(tokenless.stderr).toContain('--token or FENCEGATE_TOKEN');
  });
});
