/**
 * What the BullMQ tests share: the Redis they run on, connections to it, a queue per test with
 * its keys removed afterwards, and a fencegate store on a temp SQLite file (real clock: BullMQ's
 * lock and the lease both run on time).
 */
import { randomBytes } from 'node:crypto';
import { Queue, QueueEvents, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import { tempDir } from '../helpers/temp-dir.js';
import { findOrStartRedis, type RedisService } from './redis-service.js';

export class BullmqFixture {
  gate!: Fencegate;
  queue!: Queue;
  readonly queueName = `fencegate-${randomBytes(4).toString('hex')}`;
  #redis!: RedisService;
  #dir = tempDir('fencegate-bullmq-');
  #connections: Redis[] = [];
  #workers: Worker[] = [];
  #events = new Map<string, QueueEvents>();
  #cleanups: (() => Promise<void>)[] = [];

  async start(): Promise<void> {
    this.#redis = await findOrStartRedis();
    this.gate = await Fencegate.open({ store: `sqlite:${this.#dir.path}/store.db` });
    this.queue = new Queue(this.queueName, { connection: this.connection() });
  }

  /** A connection of its own, as a worker in another process would have. */
  connection(): Redis {
    // maxRetriesPerRequest: null, as BullMQ requires of a worker's (blocking) connection.
    const connection = new Redis(this.#redis.port, this.#redis.host, {
      maxRetriesPerRequest: null,
    });
    this.#connections.push(connection);
    return connection;
  }

  /** A queue's events (for `job.waitUntilFinished`), the fixture's queue by default; one each. */
  events(queueName = this.queueName): QueueEvents {
    let events = this.#events.get(queueName);
    if (events === undefined) {
      // Read from the stream's start: from '$' (the default) the first read can begin after a
      // job's completion, which the wait's own check of the job ran just before, and the wait
      // then never ends.
      events = new QueueEvents(queueName, { connection: this.connection(), lastEventId: '0-0' });
      this.#events.set(queueName, events);
    }
    return events;
  }

  /** Run at stop, after the workers close: removes what a test made beside the fixture's queue. */
  onStop(cleanup: () => Promise<void>): void {
    this.#cleanups.push(cleanup);
  }

  /** Closed at stop, before the connections. */
  track<W extends Worker>(worker: W): W {
    this.#workers.push(worker);
    return worker;
  }

  async stop(): Promise<void> {
    for (const worker of this.#workers) await worker.close(true);
    for (const events of this.#events.values()) await events.close();
    for (const cleanup of this.#cleanups) await cleanup();
    await this.queue.obliterate({ force: true });
    await this.queue.close();
    for (const connection of this.#connections) await connection.quit().catch(() => undefined);
    await this.gate.close();
    this.#dir.cleanup();
    await this.#redis.stop();
  }
}

/** The job data of the tests: a workflow whose memory scope the job works on. */
export interface WorkflowJob {
  workflow: string;
}

/** Registers a fresh fixture per test (call inside a describe); the getter reads the current one. */
export function useBullmqFixture(): () => BullmqFixture {
  let current: BullmqFixture | null = null;
  beforeEach(async () => {
    current = new BullmqFixture();
    await current.start();
  });
  afterEach(async () => {
    await current?.stop();
    current = null;
  });
  return () => {
    if (current === null) throw new Error('the BullMQ fixture exists only inside a test');
    return current;
  };
}
