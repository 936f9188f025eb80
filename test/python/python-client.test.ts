/**
 * The Python client's own tests (clients/python/tests, pytest) against a real `fencegate serve`
 * they start from dist/: acceptance cases A1-A5, the retry rules of the sync and async clients,
 * redirects, gateways and answers the clients do not trust, proxies, the lease keepers, a frozen
 * Python worker fenced out by a TypeScript one, the example, the wheel, and the catalog and route
 * checks. The LangGraph and Celery suites (tests/langgraph, tests/celery) have their own wrappers.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { skipForMissing } from '../helpers/missing.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VENV_PYTHON = `${ROOT}clients/python/.venv/bin/python`;
const NEEDED = ['pytest', 'pytest_asyncio', 'mypy'];
/** pytest's exit status when it collected no test at all. */
const NO_TESTS_COLLECTED = 5;

/** The first Python >= 3.9 that imports what the suite needs (the test venv first), or why not. */
function findPython(): { python: string } | { missing: string } {
  const candidates = [
    existsSync(VENV_PYTHON) ? VENV_PYTHON : undefined,
    process.env.FENCEGATE_PYTHON,
    'python3',
  ].filter((name): name is string => name !== undefined && name !== '');
  const seen: string[] = [];
  for (const python of candidates) {
    const probe = spawnSync(
      python,
      ['-c', `import sys, ${NEEDED.join(', ')}; print("%d.%d" % sys.version_info[:2])`],
      { encoding: 'utf8' },
    );
    const [major, minor] = (probe.stdout?.trim() ?? '').split('.').map(Number);
    if (probe.status === 0 && major === 3 && (minor ?? 0) >= 9) return { python };
    const why = probe.error ? 'not found' : (probe.stderr?.trim().split('\n').pop() ?? '');
    seen.push(`${python}: ${why}`);
  }
  return { missing: `no Python >= 3.9 with ${NEEDED.join(', ')} (${seen.join('; ')})` };
}

const found = findPython();
const skip = skipForMissing(
  'Python client',
  'missing' in found ? found.missing : null,
  'bash clients/python/scripts/install-test-deps.sh',
);

describe.skipIf(skip)('Python client (pytest)', () => {
  it('passes its pytest suite against a real server', async () => {
    if (!('python' in found)) return;
    const args = [
      '-m',
      'pytest',
      'clients/python/tests',
      '--ignore=clients/python/tests/langgraph',
      '--ignore=clients/python/tests/celery',
      '--ignore=clients/python/tests/standins',
      '-q',
      '-rs',
      '-p',
      'no:cacheprovider',
    ];
    const result = await run(found.python, args, {
      cwd: ROOT,
      env: { ...process.env, FENCEGATE_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { code?: unknown; stdout?: string; stderr?: string; message: string }) => {
      const why = error.code === NO_TESTS_COLLECTED ? 'pytest collected no tests' : 'pytest failed';
      throw new Error(`${why}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
    });
    console.log(result.stdout.trim().split('\n').slice(-6).join('\n'));
    expect(result.stdout).toMatch(/\d+ passed/);
  }, 300_000);
});
