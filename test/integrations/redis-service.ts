/**
 * The Redis the BullMQ tests run against: FENCEGATE_TEST_REDIS_URL when set, else the server on
 * 127.0.0.1:6379, else a throwaway redis-server started on a free loopback port (no persistence),
 * stopped when the test file ends.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { inject } from 'vitest';
import { onPath, skipForMissing } from '../helpers/missing.js';

export interface RedisService {
  host: string;
  port: number;
  stop(): Promise<void>;
}

function answersPing(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
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

/**
 * What the Redis tests lack, or null when a Redis answers (FENCEGATE_TEST_REDIS_URL or
 * 127.0.0.1:6379) or redis-server can start one. Asked once, by the global setup.
 */
export async function redisProblem(): Promise<string | null> {
  const fromEnv = process.env.FENCEGATE_TEST_REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    const url = new URL(fromEnv);
    const answers = await answersPing(url.hostname, Number(url.port || 6379));
    return answers ? null : `FENCEGATE_TEST_REDIS_URL is set but no Redis answers at ${fromEnv}`;
  }
  if (await answersPing('127.0.0.1', 6379)) return null;
  return onPath('redis-server') === null
    ? 'no Redis answers on 127.0.0.1:6379 and redis-server is not on PATH'
    : null;
}

/** For a group of Redis tests: true when this machine has no Redis and they must be skipped. */
export function skipWithoutRedis(group: string): boolean {
  return skipForMissing(
    group,
    inject('redisProblem'),
    'apt-get install redis-server (or set FENCEGATE_TEST_REDIS_URL=redis://host:port)',
  );
}

export async function findOrStartRedis(): Promise<RedisService> {
  const fromEnv = process.env.FENCEGATE_TEST_REDIS_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    const url = new URL(fromEnv);
    const port = Number(url.port || 6379);
    if (!(await answersPing(url.hostname, port))) throw new Error(`no Redis answers at ${fromEnv}`);
    return { host: url.hostname, port, stop: () => Promise.resolve() };
  }
  if (await answersPing('127.0.0.1', 6379)) {
    return { host: '127.0.0.1', port: 6379, stop: () => Promise.resolve() };
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const started = Date.now();
  while (!(await answersPing('127.0.0.1', port))) {
    if (child.exitCode !== null || Date.now() - started > 10_000) {
      child.kill();
      throw new Error('redis-server could not be started (is it installed?)');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    host: '127.0.0.1',
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
