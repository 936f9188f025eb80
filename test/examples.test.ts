/** Every runnable example must keep working: each one is run as a user would run it. */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findOrStartRedis, type RedisService } from './integrations/redis-service.js';

const run = promisify(execFile);
const examplesDir = new URL('../examples/', import.meta.url);
const pgUrl = inject('pgUrl');
const examples = readdirSync(examplesDir).filter((file) => file.endsWith('.ts'));

describe('examples', () => {
  // The BullMQ example runs on the Redis the tests find or start.
  let redis: RedisService;
  beforeAll(async () => {
    redis = await findOrStartRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('exist', () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  for (const file of examples) {
    it(`${file} runs and exits 0`, async () => {
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', new URL(file, examplesDir).pathname],
        {
          timeout: 60_000,
          // The PostgreSQL example runs on the database the test setup found or started.
          env: {
            ...process.env,
            ...(typeof pgUrl === 'string' ? { FENCEGATE_PG_URL: pgUrl } : {}),
            FENCEGATE_REDIS_URL: `redis://${redis.host}:${redis.port}`,
          },
        },
      );
      expect(stdout.length).toBeGreaterThan(0);
    });
  }
});
