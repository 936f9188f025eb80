/**
 * The LangGraph saver's pytest suite (clients/python/tests/langgraph) in the test venv, against a
 * real `fencegate serve` from dist/: LangGraph's base conformance capabilities and the 15
 * write-ownership clauses through the sync and async halves, two real worker processes on one
 * thread (one frozen with SIGSTOP while the other claims it), and the examples. Skipped, with the
 * install command, when the venv lacks LangGraph.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { skipForMissing } from '../helpers/missing.js';

const execute = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VENV = `${ROOT}clients/python/.venv/bin/python`;
const SUITE = 'clients/python/tests/langgraph';

/** Why the venv cannot run the suite, or null when it can. */
function langgraphMissing(): string | null {
  if (!existsSync(VENV)) return 'clients/python/.venv does not exist';
  const probe = spawnSync(VENV, ['-c', 'import langgraph.graph, pytest, pytest_asyncio'], {
    encoding: 'utf8',
  });
  if (probe.status === 0) return null;
  const last = probe.stderr.trim().split('\n').pop() ?? '';
  return `the venv cannot import langgraph, pytest and pytest_asyncio (${last})`;
}

const skip = skipForMissing(
  'Python LangGraph saver',
  langgraphMissing(),
  'bash clients/python/scripts/install-test-deps.sh',
);

describe.skipIf(skip)('fencegate.langgraph (pytest, real LangGraph)', () => {
  it('passes its pytest suite against a real server', async () => {
    const pytest = ['-m', 'pytest', SUITE, '-q', '-rs', '-p', 'no:cacheprovider'];
    const env = { ...process.env, FENCEGATE_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' };
    const result = await execute(VENV, pytest, {
      cwd: ROOT,
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((failure: { stdout?: string; stderr?: string; message: string }) => {
      const output = `${failure.stdout ?? ''}${failure.stderr ?? failure.message}`;
      throw new Error(`the LangGraph pytest suite failed:\n${output}`);
    });
    console.log(result.stdout.trim().split('\n').slice(-4).join('\n'));
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/skipped/);
  }, 300_000);
});
