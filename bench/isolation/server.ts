/**
 * The server of the tenant-isolation benchmark, in a process of its own (so that neither the
 * storm's load generator nor the healthy tenant's client shares its event loop): `fencegate serve`
 * as startServer runs it, on the benchmark's SQLite file, with the per-tenant rate limit given.
 * Sends `{url, healthyToken, stormToken}` over IPC once it listens; exits on SIGTERM.
 */
import { join } from 'node:path';
import { createLogger } from '../../src/server/logger.js';
import { startServer } from '../../src/server/start-server.js';
import { issueToken } from '../../src/server/tokens.js';

export interface IsolationServerReady {
  url: string;
  healthyToken: string;
  stormToken: string;
}

const [dir = '.', perSecond = '1000000'] = process.argv.slice(2);
const rate = Number(perSecond);
const running = await startServer({
  store: `sqlite:${join(dir, 'isolation.db')}`,
  host: '127.0.0.1',
  port: 0,
  logger: createLogger('info'),
  tenantRateLimit: { perSecond: rate, burst: Math.max(1, Math.round(rate / 10)) },
});
const healthy = await issueToken(running.store, { tenant: 'healthy', role: 'worker' });
const storm = await issueToken(running.store, { tenant: 'storm', role: 'worker' });
process.send?.({
  url: running.url,
  healthyToken: healthy.token,
  stormToken: storm.token,
} satisfies IsolationServerReady);
process.once('SIGTERM', () => {
  void running.close().then(() => process.exit(0));
});
