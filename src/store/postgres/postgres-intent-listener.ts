/**
 * Committed intents, announced across processes: a trigger (migration "intent notifications")
 * sends `NOTIFY fencegate_intents, '<schema>:<tenant>'` in the committing transaction, which
 * PostgreSQL delivers once the transaction commits. This listener holds one connection of its own
 * (outside the pool) with LISTEN. When that connection cannot be made or is lost (a restart, a
 * failover, a network cut) it tries again and again with a growing pause, until it listens or is
 * stopped; while it is down, dispatchers still find intents by polling.
 */
import pg from 'pg';

export const INTENT_CHANNEL = 'fencegate_intents';
/** The pause before the first reconnect attempt; each failed attempt doubles it, up to the max. */
export const RECONNECT_FIRST_MS = 250;
export const RECONNECT_MAX_MS = 5_000;

export async function listenForIntents(
  config: pg.ClientConfig,
  schema: string,
  listener: (tenant: string) => void,
): Promise<() => Promise<void>> {
  const prefix = `${schema}:`;
  /** The connection listening now; null while down. */
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let pauseMs = RECONNECT_FIRST_MS;

  const connect = async (): Promise<void> => {
    const next = new pg.Client(config);
    next.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (message.channel === INTENT_CHANNEL && payload.startsWith(prefix)) {
        listener(payload.slice(prefix.length));
      }
    });
    // Until it listens, a failure is the attempt's (handled below); afterwards it is a loss.
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${INTENT_CHANNEL}`);
    } catch (error) {
      void next.end().catch(() => undefined);
      throw error;
    }
    if (stopped) {
      await next.end();
      return;
    }
    client = next;
    pauseMs = RECONNECT_FIRST_MS;
  };

  /** The listening connection broke: drop it and start reconnecting. */
  const lost = (broken: pg.Client): void => {
    if (stopped || client !== broken) return;
    client = null;
    void broken.end().catch(() => undefined);
    scheduleAttempt();
  };

  const scheduleAttempt = (): void => {
    if (stopped) return;
    // Whatever was announced meanwhile is found by the dispatcher's poll.
    retry = setTimeout(() => {
      connect().catch(() => {
        pauseMs = Math.min(pauseMs * 2, RECONNECT_MAX_MS);
        scheduleAttempt();
      });
    }, pauseMs);
    retry.unref();
  };

  // A first attempt that fails is retried like a lost connection: a dispatcher starting while the
  // database restarts would otherwise never be woken, only polled.
  await connect().catch(() => {
    pauseMs = Math.min(pauseMs * 2, RECONNECT_MAX_MS);
    scheduleAttempt();
  });
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = null;
    await current?.end().catch(() => undefined);
  };
}
