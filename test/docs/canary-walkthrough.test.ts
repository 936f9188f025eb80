/**
 * The canary walkthrough of docs/rollout.md runs as it stands: each block marked
 * `<!-- walkthrough: FILE -->` is written to FILE in a folder of its own, then the blocks marked
 * `<!-- walkthrough -->` run in order as one bash script there (a server, two BullMQ workers in the
 * background, the commands), as a reader pasting them into one terminal would. The folder has the
 * package installed beside it (`npm install fencegate bullmq`, as the walkthrough says, is
 * replaced by links to this checkout: the built CLI and dist, so run `npm run build` first), the
 * server takes a free port instead of 7420, and the queues live in a database of the Redis the
 * tests find.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import {
  findOrStartRedis,
  skipWithoutRedis,
  type RedisService,
} from '../integrations/redis-service.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/fencegate.js');
const MARKED = /<!-- walkthrough(?:: ([\w.-]+))? -->\n+```(\w+)\n([\s\S]*?)\n```/g;
/** A Redis database no other test uses: the walkthrough's queues have fixed names. */
const REDIS_DB = 13;
const QUEUES = ['compaction-v7', 'compaction-v8'];

interface Walkthrough {
  files: { name: string; text: string }[];
  script: string;
}

function walkthrough(): Walkthrough {
  const text = readFileSync(join(ROOT, 'docs/rollout.md'), 'utf8');
  const files: Walkthrough['files'] = [];
  const commands: string[] = [];
  for (const [, name, language, code] of text.matchAll(MARKED)) {
    if (name !== undefined) files.push({ name, text: `${code}\n` });
    else if (language === 'sh') commands.push(code!);
    else throw new Error(`a walkthrough block in ${language} names no file`);
  }
  return { files, script: commands.join('\n') };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** `npx fencegate` as it runs in a project that installed the package, without npm's start-up. */
const NPX = `npx() { if [ "$1" = fencegate ]; then shift; node '${BIN}' "$@"; else command npx "$@"; fi; }`;

/** Runs `script` in its own process group, so that whatever it left running is stopped after. */
function runScript(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('bash', ['-c', `set -eo pipefail\n${NPX}\n${script}`], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr.on('data', (data: Buffer) => (output += data.toString()));
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // Nothing of the group is left.
      }
    };
    const timer = setTimeout(() => stopGroup('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      // The server and the workers, should the script have stopped before its last line.
      stopGroup('SIGTERM');
      setTimeout(() => stopGroup('SIGKILL'), 2_000).unref();
      resolve({ code, output });
    });
  });
}

describe.skipIf(skipWithoutRedis('the canary walkthrough'))('the canary walkthrough', () => {
  const dir = tempDir('fencegate-canary-walkthrough-');
  let redis: RedisService;
  let redisUrl: string;

  async function emptyQueues(): Promise<void> {
    const connection = { host: redis.host, port: redis.port, db: REDIS_DB };
    for (const name of QUEUES) {
      const queue = new Queue(name, { connection });
      await queue.obliterate({ force: true });
      await queue.close();
    }
  }

  beforeAll(async () => {
    redis = await findOrStartRedis();
    redisUrl = `redis://${redis.host}:${redis.port}/${REDIS_DB}`;
    await emptyQueues();
  });
  afterAll(async () => {
    await emptyQueues();
    await redis.stop();
    dir.cleanup();
  });

  it(
    'ramps a BullMQ fleet to v8, fails its gate and rolls back by itself: no v8 write after',
    { timeout: 120_000 },
    async () => {
      if (!existsSync(join(ROOT, 'dist/client/index.js'))) {
        throw new Error('the walkthrough runs the built package: run `npm run build` first');
      }
      const { files, script } = walkthrough();
      expect(files.map((file) => file.name).sort()).toEqual([
        'check.mjs',
        'gates.json',
        'queues.mjs',
        'rollouts.json',
        'send-jobs.mjs',
        'worker.mjs',
      ]);
      mkdirSync(join(dir.path, 'node_modules'));
      symlinkSync(ROOT, join(dir.path, 'node_modules', 'fencegate'));
      symlinkSync(join(ROOT, 'node_modules', 'bullmq'), join(dir.path, 'node_modules', 'bullmq'));
      for (const file of files) writeFileSync(join(dir.path, file.name), file.text);

      const port = await freePort();
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
      env.REDIS_URL = redisUrl;
      const run = await runScript(script.replaceAll('7420', String(port)), dir.path, env, 90_000);
      expect({ code: run.code }, run.output).toEqual({ code: 0 });

      // The gate, not an operator, rolled v8 back at 50 %, and no v8 write landed after.
      expect(run.output).toMatch(
        /canary: rolled_back at 50 %: gate v8-jobs failed at step 2: value [\d.]+ of \d+ samples, .*limit 0\.1/,
      );
      expect(run.output).toMatch(/stale v8 commits refused: \d+, accepted: 0/);
      expect(run.output).toContain('v8 writes accepted after the rollback: 0');
      expect(run.output).toMatch(/"action":"advance"\n"action":"rollback","reason":"gate v8-jobs/);
    },
  );
});
