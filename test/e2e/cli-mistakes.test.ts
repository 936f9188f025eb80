/**
 * The core-loop commands facing a newcomer's mistakes: a --url or --token that cannot work, a
 * usage slip, a huge --write, a refused token, a commit whose outcome stays unknown. Each gets the
 * exit code the docs give (2 usage, 1 refused, 3 outcome unknown) and a message that says what to
 * fix, never echoing a password, a token or a megabyte of input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server/start-server.js';
import { FaultProxy } from '../client/fault-proxy.js';
import { inProcessCli } from '../helpers/in-process-cli.js';
import { operatorServer } from '../helpers/operator-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('fencegate-cli-mistakes-');
let server: RunningServer;
let env: Record<string, string>;

beforeAll(async () => {
  ({ server, env } = await operatorServer(dir.path, 'acme'));
});

afterAll(async () => {
  await server.close();
  dir.cleanup();
});

function cli(argv: string[], extraEnv: Record<string, string> = {}) {
  return inProcessCli(argv, { ...env, ...extraEnv });
}

/** Everything a run printed, on either stream. */
function printed(run: { stdout: string; stderr: string }): string {
  return run.stdout + run.stderr;
}

describe('a --url or --token that cannot work', () => {
  const commit = ['commit', 'wf-url/memory', '--fence', '1', '--op', 'url-1'];

  it('refuses a --url holding a password, exit 2, naming the flag and never echoing it', async () => {
    const withPassword = server.url.replace('http://', 'http://alice:s3cr3t-pw@');
    for (const [argv, extra] of [
      [[...commit, '--url', withPassword], {}],
      [['scope', 'wf-url/memory', '--url', withPassword], {}],
      [commit, { FENCEGATE_URL: withPassword }],
    ] as const) {
      const run = await cli([...argv], extra);
      expect({ argv, code: run.code }).toEqual({ argv, code: 2 });
      expect(printed(run)).not.toContain('s3cr3t-pw');
      expect(printed(run)).not.toContain('alice');
      expect(run.stderr).toMatch(/(--url|FENCEGATE_URL) must not hold a user or password/);
    }
  });

  it('refuses a --url that is not an http(s) URL, exit 2, saying what one looks like', async () => {
    for (const url of ['127.0.0.1:7420', 'not a url', 'ftp://127.0.0.1/', '']) {
      const run = await cli(['scope', 'wf-url/memory', '--url', url]);
      expect({ url, code: run.code }).toEqual({ url, code: 2 });
      expect(run.stderr).toContain('--url must be an http:// or https:// URL');
      expect(run.stderr).toContain('http://127.0.0.1:7420');
    }
  });

  it('refuses a malformed --token, exit 2, naming the flag and never echoing the token', async () => {
    for (const token of ['fg_has a space', 'fg_line\nbreak', 'bearer-x', 'fg_ümlaut']) {
      for (const [argv, extra] of [
        [['scope', 'wf-url/memory', '--token', token], {}],
        [commit, { FENCEGATE_TOKEN: token }],
      ] as const) {
        const run = await cli([...argv], extra);
        expect({ token, argv, code: run.code }).toEqual({ token, argv, code: 2 });
        expect(printed(run)).not.toContain(token);
        expect(run.stderr).toMatch(/(--token|FENCEGATE_TOKEN) is not a fencegate token/);
      }
    }
  });

  it('answers a well-formed token the server does not know as refused: exit 1, unauthorized', async () => {
    const unknown = `fg_${'A'.repeat(43)}`;
    for (const argv of [
      ['acquire', 'wf-url/memory', '--holder', 'w'],
      [...commit, '--write', 'summary@0=1'],
      ['outcome', 'url-1'],
    ]) {
      const run = await cli(argv, { FENCEGATE_TOKEN: unknown });
      expect({ argv, code: run.code }).toEqual({ argv, code: 1 });
      expect(run.stderr).toContain('unauthorized: unknown token');
      expect(printed(run)).not.toContain(unknown);
    }
    expect((await cli(['scope', 'wf-url/memory'])).stdout).toContain('does not exist yet');
  });
});

describe('usage slips', () => {
  it('an extra positional argument names the command, what it takes, and exits 2', async () => {
    const run = await cli(['scope', 'wf-1/memory', 'extra']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'fencegate scope: unexpected argument "extra": expected only SCOPE',
    );
    expect(run.stderr).toContain('Usage: fencegate scope SCOPE');
    const token = `fg_${'S'.repeat(43)}`;
    const tokenWithoutFlag = await cli(['scope', 'wf-1/memory', token]);
    expect(tokenWithoutFlag.code).toBe(2);
    expect(tokenWithoutFlag.stderr).toContain('unexpected argument fg_… (a token?)');
    expect(printed(tokenWithoutFlag)).not.toContain(token);
    const audit = await cli(['audit', 'wf-1/memory']);
    expect(audit.code).toBe(2);
    expect(audit.stderr).toContain(
      'fencegate audit: unexpected argument "wf-1/memory": expected options only',
    );
  });

  it('a missing argument or flag names the command, what is missing, and shows the usage line', async () => {
    const noScope = await cli(['acquire', '--holder', 'w']);
    expect(noScope.code).toBe(2);
    expect(noScope.stderr).toContain('fencegate acquire: SCOPE is missing');
    expect(noScope.stderr).toContain('Usage: fencegate acquire SCOPE --holder H');
    const emptyScope = await cli(['acquire', '', '--holder', 'w']);
    expect(emptyScope.code).toBe(2);
    expect(emptyScope.stderr).toContain('fencegate acquire: SCOPE is empty');
    expect(emptyScope.stderr).not.toContain('--scope');
    const noHolder = await cli(['acquire', 'wf-1/memory']);
    expect(noHolder.code).toBe(2);
    expect(noHolder.stderr).toContain('fencegate acquire: --holder is required');
    expect(noHolder.stderr).toContain('Usage: fencegate acquire SCOPE --holder H');
  });

  it('a negative, fractional or zero --limit names the flag and the integers accepted, exit 2', async () => {
    for (const limit of [['--limit', '-5'], ['--limit=-5'], ['--limit', '1.5'], ['--limit', '0']]) {
      const run = await cli(['audit', ...limit]);
      expect({ limit, code: run.code }).toEqual({ limit, code: 2 });
      expect(run.stderr).toContain('--limit must be an integer from 1 to 1000');
    }
    const fence = await cli(['commit', 'wf-1/memory', '--fence', '-1', '--op', 'x']);
    expect(fence.code).toBe(2);
    expect(fence.stderr).toContain(
      '--fence must be an integer from 0 to 9007199254740991, not "-1"',
    );
    // Past 2^53 - 1 a number would be rounded: the message gives the range, not "0 or more".
    const huge = await cli(['commit', 'wf-1/memory', '--fence', '9007199254740993', '--op', 'x']);
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain('--fence must be an integer from 0 to 9007199254740991');
  });
});

describe('a long --write', () => {
  it('is echoed as a short prefix with its length, never whole', async () => {
    const huge = 'x'.repeat(1024 * 1024);
    const notAWrite = await cli([
      'commit',
      'wf-1/memory',
      '--fence',
      '1',
      '--op',
      'w',
      '--write',
      huge,
    ]);
    expect(notAWrite.code).toBe(2);
    expect(notAWrite.stderr).toContain('NAME@REVISION=JSON');
    expect(notAWrite.stderr).toContain('(1048576 characters)');
    expect(notAWrite.stderr.length).toBeLessThan(4000);

    const longName = await cli([
      ...['commit', 'wf-1/memory', '--fence', '1', '--op', 'w'],
      ...['--write', `${huge}@0=not-json`],
    ]);
    expect(longName.code).toBe(2);
    expect(longName.stderr).toContain('(1048576 characters)');
    expect(longName.stderr.length).toBeLessThan(4000);
  });

  it('sent to the server is refused without the value coming back', async () => {
    const acquired = await cli(['acquire', 'wf-big/memory', '--holder', 'w', '--json']);
    expect(acquired.code).toBe(0);
    const value = JSON.stringify('y'.repeat(1024 * 1024));
    const run = await cli([
      ...['commit', 'wf-big/memory', '--fence', '1', '--op', 'big-1'],
      ...['--write', `summary@0=${value}`],
    ]);
    expect(run.code).not.toBe(0);
    expect(printed(run).length).toBeLessThan(4000);
  });
});

describe('audit lines', () => {
  it('print the fence an acquire and a takeover move the scope to', async () => {
    expect((await cli(['acquire', 'wf-audit/memory', '--holder', 'a'])).code).toBe(0);
    expect((await cli(['takeover', 'wf-audit/memory', '--holder', 'b'])).code).toBe(0);
    const audit = await cli(['audit', '--scope', 'wf-audit/memory']);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/acquire\s+granted\s+fence 1/);
    expect(audit.stdout).toMatch(/takeover\s+granted\s+fence 2/);
    expect(audit.stdout).not.toContain('fence -');
  });
});

describe('a commit whose outcome stays unknown', () => {
  it('exits 3 and says which fencegate command reads or settles it', async () => {
    const proxy = new FaultProxy(server.url);
    const url = await proxy.start();
    try {
      expect((await cli(['acquire', 'wf-lost/memory', '--holder', 'w', '--url', url])).code).toBe(
        0,
      );
      // The commit lands but its reply is lost, and the reads that would settle it are lost too.
      proxy.inject('POST', '/v1/commit', 'drop-reply', 100);
      proxy.inject('GET', '/v1/operations/', 'drop-request', 100);
      proxy.inject('POST', '/v1/operations/', 'drop-request', 100);
      const run = await cli([
        ...['commit', 'wf-lost/memory', '--fence', '1', '--op', 'lost-1', '--url', url],
        ...['--write', 'summary@0=1'],
      ]);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain('fencegate outcome lost-1');
      expect(run.stderr).toContain('fencegate outcome lost-1 --abandon');
      expect(run.stderr).not.toContain('abandonOperation');
    } finally {
      await proxy.stop();
    }
    const outcome = await cli(['outcome', 'lost-1']);
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toContain('committed lost-1');
  });
});
