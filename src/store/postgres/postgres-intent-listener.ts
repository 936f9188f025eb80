/**
 * Committed intents, announced across processes: a trigger (migration "intent notifications")
 * sends `NOTIFY fencegate_intents, '<schema>:<tenant>'` in the committing transaction, which
 * PostgreSQL delivers once the transaction commits. This listener holds one connection of its own
 * (outside the pool) with LISTEN, and reconnects after a failure; while it is down, dispatchers
 * still find intents by polling.
 */
import pg from 'pg';

export const INTENT_CHANNEL = 'fencegate_intents';
const RECONNECT_MS = 1000;

export async function listenForIntents(
  config: pg.ClientConfig,
  schema: string,
  listener: (tenant: string) => void,
): Promise<() => Promise<void>> {
  const prefix = `${schema}:`;
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client(config);
    next.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (message.channel === INTENT_CHANNEL && payload.startsWith(prefix)) {
        listener(payload.slice(prefix.length));
      }
    });
    next.on('error', () => reconnect(next));
    next.on('end', () => reconnect(next));
    await next.connect();
    await next.query(`LISTEN ${INTENT_CHANNEL}`);
    if (stopped) {
      await next.end();
      return;
    }
    client = next;
  };

  const reconnect = (broken: pg.Client): void => {
    if (stopped || client !== broken) return;
    client = null;
    void broken.end().catch(() => undefined);
    // Whatever was announced meanwhile is found by the dispatcher's poll.
    retry = setTimeout(() => {
      connect().catch(() => reconnect(broken));
    }, RECONNECT_MS);
    retry.unref();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = null;
    await current?.end().catch(() => undefined);
  };
}
