/**
 * The Python client's own tests (clients/python/tests, pytest) against a real `fencegate serve`
 * they start from dist/: acceptance cases A1-A5, the retry rules, the lease keeper, a frozen
 * Python worker fenced out by a TypeScript one, the example, and the catalog and route checks.
 */
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The first Python ≥ 3.9 that has pytest, or why there is none. */
function findPython(): { python: string } | { missing: string } {
  const candidates = [process.env.FENCEGATE_PYTHON, 'python3', 'python'].filter(
    (name): name is string => name !== undefined && name !== '',
  );
  const seen: string[] = [];
  for (const python of candidates) {
    const probe = spawnSync(
      python,
      ['-c', 'import sys, pytest; print("%d.%d" % sys.version_info[:2])'],
      { encoding: 'utf8' },
    );
    const version = probe.stdout?.trim() ?? '';
    const [major, minor] = version.split('.').map(Number);
    if (probe.status === 0 && major === 3 && (minor ?? 0) >= 9) return { python };
    seen.push(probe.error ? `${python}: not found` : `${python}: ${version || 'no pytest'}`);
  }
  return { missing: `no Python >= 3.9 with pytest (${seen.join('; ')})` };
}

const found = findPython();
if ('missing' in found) {
  console.warn(`Skipping the Python client tests: ${found.missing}`);
}

describe.skipIf('missing' in found)('Python client (pytest)', () => {
  it('passes its pytest suite against a real server', async () => {
    if (!('python' in found)) return;
    const result = await run(
      found.python,
      ['-m', 'pytest', 'clients/python/tests', '-q', '-rs', '-p', 'no:cacheprovider'],
      {
        cwd: ROOT,
        env: { ...process.env, FENCEGATE_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`pytest failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
    });
    console.log(result.stdout.trim().split('\n').slice(-6).join('\n'));
    expect(result.stdout).toMatch(/\d+ passed/);
  }, 300_000);
});
