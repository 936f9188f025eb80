/**
 * Measuring commit→delivered across a PostgreSQL restart: commits made in this process, delivered
 * by a dispatcher that only LISTEN/NOTIFY can wake before its (long) poll, to a real receiver.
 */
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { expect } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { INTENT_CHANNEL } from '../../src/store/postgres/postgres-intent-listener.js';
import type { Receiver } from '../dispatch/receiver.js';

type TenantGate = ReturnType<Fencegate['forTenant']>;

/** Retries `work` while the restarted server still refuses (pools reconnect on their own). */
async function retryWhileDown<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= 50) throw error;
      await delay(200);
    }
  }
}

/**
 * Whether, within `withinMs`, a connection to `url`'s database has run LISTEN on the intent
 * channel and waits there. Only a dispatcher's listener runs that statement.
 */
export async function listenerConnected(url: string, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  while (performance.now() < deadline) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ listening: number }>(
        `SELECT count(*)::int AS listening FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'idle' AND query = $1`,
        [`LISTEN ${INTENT_CHANNEL}`],
      );
      if ((rows[0]?.listening ?? 0) > 0) return true;
    } catch {
      // The server is still coming back: ask again.
    } finally {
      await client.end().catch(() => undefined);
    }
    await delay(100);
  }
  return false;
}

/**
 * Commits one intent for target `hook` and resolves with the ms from the commit until the
 * receiver got it. Rejects when it took longer than `withinMs`: then the dispatcher was not woken
 * by the commit and waits for its poll.
 */
export async function commitToDelivered(
  gate: TenantGate,
  receiver: Receiver,
  key: string,
  withinMs: number,
): Promise<number> {
  const count = receiver.requests.length;
  const started = await retryWhileDown(async () => {
    const grant = await gate.acquire({ scope: `s-${key}`, holder: 'w', ttlMs: 60_000 });
    const at = performance.now();
    // A repeat after a lost answer replays the same operation: still one intent.
    const result = await gate.commit({
      scope: `s-${key}`,
      fence: grant.fence,
      operationId: `op-${key}`,
      intents: [{ effectKey: key, target: 'hook', payload: { key } }],
    });
    expect(result.outcome).toBe('committed');
    return at;
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, withinMs, 'late')));
  const arrived = receiver.waitForRequests(count + 1).then(() => 'delivered' as const);
  const first = await Promise.race([arrived, late]);
  clearTimeout(timer);
  if (first === 'late') {
    throw new Error(`intent ${key} was not delivered within ${withinMs} ms of its commit`);
  }
  return performance.now() - started;
}
