/** Every runnable example must keep working: each one is run as a user would run it. */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundledEntries, type BundledEntries } from './helpers/bundled-entry.js';
import { skipWithoutPostgres } from './helpers/stores/postgres.js';
import {
  findOrStartRedis,
  skipWithoutRedis,
  type RedisService,
} from './integrations/redis-service.js';

const run = promisify(execFile);
const examplesDir = new URL('../examples/', import.meta.url);
const pgUrl = inject('pgUrl');
const examples = readdirSync(examplesDir).filter((file) => file.endsWith('.ts'));
const noRedis = skipWithoutRedis('BullMQ');
/**
 * The example that runs as its header says, `npx tsx examples/<file>`; the others run on node from
 * one bundle of the examples, which proves the same example code at half the CPU of a tsx start.
 */
const THROUGH_TSX = 'stale-worker.ts';
/** The examples that need a service this machine may lack: skipped, and reported, without it. */
const skipped: Record<string, boolean> = {
  'bullmq-worker.ts': noRedis,
  'postgres-own-table.ts': skipWithoutPostgres(),
};

describe('examples', () => {
  // The BullMQ example runs on the Redis the tests find or start.
  let redis: RedisService | undefined;
  let bundle: BundledEntries | undefined;
  beforeAll(async () => {
    if (!noRedis) redis = await findOrStartRedis();
    bundle = await bundledEntries(examples.map((file) => new URL(file, examplesDir).pathname));
  });
  afterAll(async () => {
    await redis?.stop();
    bundle?.remove();
  });

  it('exist', () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  for (const file of examples) {
    it.skipIf(skipped[file] ?? false)(`${file} runs and exits 0`, async () => {
      const source = new URL(file, examplesDir).pathname;
      const { stdout } = await run(
        process.execPath,
        file === THROUGH_TSX ? ['--import', 'tsx', source] : [bundle!.bundleOf(source)],
        {
          timeout: 60_000,
          // The PostgreSQL example runs on the database the test setup found or started.
          env: {
            ...process.env,
            ...(typeof pgUrl === 'string' ? { FENCEGATE_PG_URL: pgUrl } : {}),
            ...(redis === undefined
              ? {}
              : { FENCEGATE_REDIS_URL: `redis://${redis.host}:${redis.port}` }),
          },
        },
      );
      expect(stdout.length).toBeGreaterThan(0);
    });
  }
});
