/**
 * The Celery integration's pytest suite (clients/python/tests/celery) in the test venv: a task
 * redelivered while its first run still runs, on real Redis with two real worker processes, has
 * exactly one accepted effect with fenced_task and two without; a stored result is returned
 * without running the body; tasks sharing an entity scope each run once and return their own
 * result; long task ids keep names of their own; single runs through Celery's tracer. Skipped, with the install
 * command, when the venv or Redis is missing.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findOrStartRedis,
  skipWithoutRedis,
  type RedisService,
} from '../integrations/redis-service.js';
import { skipForMissing } from '../helpers/missing.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PYTHON = `${ROOT}clients/python/.venv/bin/python`;

/** What the venv lacks for the Celery tests, or null. */
function venvProblem(): string | null {
  if (!existsSync(PYTHON)) return 'clients/python/.venv does not exist';
  const probe = spawnSync(PYTHON, ['-c', 'import celery, kombu, redis, pytest'], {
    encoding: 'utf8',
  });
  return probe.status === 0
    ? null
    : `the venv cannot import celery, kombu, redis and pytest (${probe.stderr.trim().split('\n').pop() ?? ''})`;
}

const skip =
  skipForMissing(
    'Python Celery integration',
    venvProblem(),
    'bash clients/python/scripts/install-test-deps.sh',
  ) || skipWithoutRedis('Python Celery integration');

describe.skipIf(skip)('fencegate.celery (pytest, real Celery and Redis)', () => {
  let redis: RedisService | undefined;
  beforeAll(async () => {
    redis = await findOrStartRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('passes its pytest suite against a real server', async () => {
    const service = redis as RedisService;
    const result = await run(
      PYTHON,
      ['-m', 'pytest', 'clients/python/tests/celery', '-q', '-rs', '-p', 'no:cacheprovider'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          FENCEGATE_NODE: process.execPath,
          FENCEGATE_TEST_REDIS_URL: `redis://${service.host}:${service.port}`,
          PYTHONDONTWRITEBYTECODE: '1',
        },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`pytest failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
    });
    console.log(result.stdout.trim().split('\n').slice(-4).join('\n'));
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/skipped/);
  }, 240_000);
});
