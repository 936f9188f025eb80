/**
 * A server on a SQLite file of `folder`, in this process, with an operator token of `tenant`:
 * what a command-line or docs test calls through FENCEGATE_URL and FENCEGATE_TOKEN.
 */
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { issueToken } from '../../src/server/tokens.js';

export async function operatorServer(
  folder: string,
  tenant: string,
): Promise<{ server: RunningServer; env: { FENCEGATE_URL: string; FENCEGATE_TOKEN: string } }> {
  const server = await startServer({
    store: `sqlite:${join(folder, 'server.db')}`,
    host: '127.0.0.1',
    port: 0,
    adminToken: 'operator-server-admin-token-0123',
  });
  const { token } = await issueToken(server.store, { tenant, role: 'operator' });
  return { server, env: { FENCEGATE_URL: server.url, FENCEGATE_TOKEN: token } };
}
