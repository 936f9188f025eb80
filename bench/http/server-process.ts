/**
 * The server under test of the HTTP benchmark, in a process of its own: `fencegate` (startServer
 * with its defaults: JSON logs at info, group commit on a SQLite file, process metrics) or `bare`
 * (bare-server.ts). Logs go to this process's stdout, which the benchmark points at a file. Sends
 * `{url, token, scopes}` over IPC once it listens; exits on SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Fencegate } from '../../src/gate.js';
import { createLogger } from '../../src/server/logger.js';
import { startServer } from '../../src/server/start-server.js';
import { issueToken } from '../../src/server/tokens.js';
import { buildBareServer } from './bare-server.js';

export interface ServerReady {
  url: string;
  token: string;
  /** Scope and fence pairs the caller may commit to. */
  scopes: { scope: string; fence: number }[];
}

/** Answer to the IPC message `'memory'`: this process's memory, in bytes. */
export interface MemorySample {
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number };
}

/** Answer to the IPC message `'cpu'`: CPU time this process has used so far, in microseconds. */
export interface CpuSample {
  cpuMicros: number;
}

const SCOPES = 64;

async function main(mode: string, dir: string): Promise<() => Promise<void>> {
  const names = Array.from({ length: SCOPES }, (_, i) => `bench/http-${i}`);
  if (mode === 'bare') {
    const token = randomBytes(32).toString('base64url');
    const app = buildBareServer(join(dir, 'bare.db'), token, names);
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    send({ url, token, scopes: names.map((scope) => ({ scope, fence: 1 })) });
    return () => app.close();
  }
  const running = await startServer({
    store: `sqlite:${join(dir, 'fencegate.db')}`,
    host: '127.0.0.1',
    port: 0,
    logger: createLogger('info'),
  });
  const { token } = await issueToken(running.store, { tenant: 'bench', role: 'worker' });
  const gate = (await Fencegate.open({ store: running.store })).forTenant('bench');
  const scopes = [];
  for (const scope of names) {
    const grant = await gate.acquire({ scope, holder: 'bench', ttlMs: 86_400_000 });
    scopes.push({ scope, fence: grant.fence });
  }
  send({ url: running.url, token, scopes });
  return () => running.close();
}

function send(ready: ServerReady): void {
  process.send?.(ready);
}

const [mode = 'fencegate', dir = '.'] = process.argv.slice(2);
const close = await main(mode, dir);
// Memory of this process on request, for the scale benchmark's memory run; CPU time, for the
// HTTP benchmark's CPU per request.
process.on('message', (message) => {
  if (message === 'memory') {
    // Garbage not yet collected is not memory the server holds: collect it first when the
    // process runs with --expose-gc, so heapUsed is what is retained.
    (globalThis as { gc?: () => void }).gc?.();
    const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
    process.send?.({ memory: { rss, heapUsed, heapTotal, external } } satisfies MemorySample);
  }
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMicros: user + system } satisfies CpuSample);
  }
});
process.once('SIGTERM', () => {
  void close().then(() => process.exit(0));
});
