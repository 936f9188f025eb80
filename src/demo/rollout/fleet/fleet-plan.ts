/**
 * What the fleet demo's parent and its worker processes share: the workers' configuration, the
 * job's data, the record a compaction writes and the Redis keys the run stages and counts in.
 */

export interface FleetRedis {
  host: string;
  port: number;
  db?: number;
  username?: string;
  password?: string;
}

export interface FleetWorkerConfig {
  /** The fencegate server and a worker token of the demo's tenant. */
  url: string;
  token: string;
  redis: FleetRedis;
  /** The version this process runs: its handler and its queue. */
  version: 'v7' | 'v8';
  queues: { v7: string; v8: string };
  /** Jobs a process runs at once. */
  concurrency: number;
  /** Names this run's keys in Redis. */
  runId: string;
}

export interface FleetJob {
  scope: string;
}

/** The environment variable a worker process reads its FleetWorkerConfig from, as JSON. */
export const FLEET_WORKER_ENV = 'FENCEGATE_FLEET_WORKER';

/** The record a compaction writes, once per workflow: created only if absent. */
export const COMPACTED = 'compacted';

/** Worker processes per version. */
export const WORKERS_PER_VERSION = 2;
/** Jobs each worker process runs at once. */
export const FLEET_CONCURRENCY = 8;
/**
 * Runs a job gets, and the first wait before a retry (doubled at each retry): a run refused by the
 * rollback, or one whose compaction failed v8's check, is retried once the rollback has moved its
 * scope back, and handed to v7. Ten runs wait nearly a minute in all before a job fails for good.
 */
export const FLEET_ATTEMPTS = 10;
export const FLEET_RETRY_DELAY_MS = 100;

/** The Redis keys of a run: v8's traffic share, its two switches and its counters. */
export function fleetKeys(runId: string) {
  const base = `fencegate-demo-fleet:${runId}`;
  return {
    /** The percent of the traffic v8 serves, as its deployment tells it: its defect's cause. */
    share: `${base}:share`,
    /** Set while v8 handlers whose compaction failed its check wait before failing. */
    stage: `${base}:stage`,
    /** v8 handlers waiting at the stage: their jobs fail once it is lifted. */
    failing: `${base}:failing`,
    /** Set while v8 handlers must stop before their commit. */
    hold: `${base}:hold`,
    /** v8 handlers that reached the hold: the jobs in flight. */
    held: `${base}:held`,
    done: `${base}:done`,
    refused: `${base}:refused`,
    handedBack: `${base}:handed-back`,
  };
}

/** The connection options of a `redis://[user:password@]host:port[/db]` URL. */
export function parseRedisUrl(url: string): FleetRedis {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RangeError(`--redis must be a redis://host:port URL, got ${url}`);
  }
  if (parsed.protocol !== 'redis:') {
    throw new RangeError(`--redis must be a redis://host:port URL, got ${parsed.protocol}`);
  }
  const redis: FleetRedis = { host: parsed.hostname, port: Number(parsed.port || 6379) };
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '') redis.db = Number(db);
  if (parsed.username !== '') redis.username = decodeURIComponent(parsed.username);
  if (parsed.password !== '') redis.password = decodeURIComponent(parsed.password);
  return redis;
}
