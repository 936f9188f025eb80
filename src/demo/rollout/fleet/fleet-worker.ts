/**
 * One worker process of `fencegate demo rollout --fleet`: a BullMQ worker of one policy version
 * (blue/green: a fleet and a queue per version) over HTTP with a worker token. Its processor has
 * the handler of its own version and the other version's queue: a job whose workflow runs the
 * other version is handed back there.
 *
 * Each handler compacts the workflow's memory. v8's compaction keeps fewer handoff facts as its
 * share of the traffic grows (v8-compaction.ts), so v8 checks its output against the memory it
 * read and fails the job, writing nothing, when a fact is lost: the jobs ledger records the run
 * `retrying`, and the rollout's gate counts it. The demo stages its jobs with two Redis switches:
 * while `stage` is set a failing v8 handler waits before it fails, and while `hold` is set a v8
 * handler stops before its commit, so the gate fails with v8 jobs in flight.
 *
 * Started with its FleetWorkerConfig as JSON in FENCEGATE_FLEET_WORKER; prints `ready` once it
 * consumes, and closes on SIGTERM.
 */
import { Queue, RedisConnection, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { FencegateClient } from '../../../client/index.js';
import {
  fencedProcessor,
  isHandedBack,
  type FencedJobContext,
  type HandedBack,
} from '../../../integrations/bullmq/index.js';
import { missingFacts, type WorkflowMemory } from '../../handoff-facts.js';
import { MEMORY } from '../../plan.js';
import { STEPS } from '../plan.js';
import { compactV7, compactV8 } from '../v8-compaction.js';
import {
  COMPACTED,
  FLEET_WORKER_ENV,
  fleetKeys,
  type FleetJob,
  type FleetWorkerConfig,
} from './fleet-plan.js';

/** How often a held v8 handler looks whether the demo let it go. */
const HOLD_POLL_MS = 20;
/** A held handler never waits longer than this: the demo's checks then report what happened. */
const HOLD_LIMIT_MS = 60_000;

async function main(config: FleetWorkerConfig): Promise<void> {
  const connection: ConnectionOptions = { ...config.redis, maxRetriesPerRequest: null };
  const client = new FencegateClient({ url: config.url, token: config.token });
  const other = config.version === 'v7' ? 'v8' : 'v7';
  const otherQueue = new Queue(config.queues[other], { connection });
  const keys = fleetKeys(config.runId);
  const counters = new RedisConnection(connection);
  const redis = await counters.client;

  /** Waits while the demo keeps `key` set, and at most HOLD_LIMIT_MS. */
  async function waitWhile(key: string): Promise<void> {
    const until = Date.now() + HOLD_LIMIT_MS;
    while ((await redis.get(key)) !== null && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, HOLD_POLL_MS));
    }
  }

  /** v8's compaction at its share of the traffic, checked: a lost handoff fact fails the job. */
  async function compactAsV8(job: Job<FleetJob>, memory: WorkflowMemory): Promise<WorkflowMemory> {
    const share = Number((await redis.get(keys.share)) ?? STEPS[0]);
    const compacted = compactV8(memory, share);
    const lost = missingFacts(memory.facts, compacted).length;
    if (lost > 0) {
      if ((await redis.get(keys.stage)) !== null) {
        await redis.hset(keys.failing, { [String(job.id)]: 1 });
        await waitWhile(keys.stage);
      }
      throw new Error(`v8's compaction lost ${lost} handoff facts at ${share} %; nothing written`);
    }
    if ((await redis.get(keys.hold)) !== null) {
      await redis.hset(keys.held, { [String(job.id)]: 1 });
      await waitWhile(keys.hold);
    }
    return compacted;
  }

  async function compact(job: Job<FleetJob>, ctx: FencedJobContext): Promise<string> {
    const memory = await client.getRecord(ctx.scope, MEMORY);
    const read = memory.value as WorkflowMemory;
    const compacted = config.version === 'v8' ? await compactAsV8(job, read) : compactV7(read);
    const result = await ctx.commit({
      writes: [
        {
          name: COMPACTED,
          expectRevision: 0,
          value: {
            by: config.version,
            memoryRevision: memory.revision,
            facts: compacted.facts,
            job: job.id ?? null,
          },
        },
      ],
      release: true,
    });
    if (result.outcome === 'rejected') {
      await redis.hset(keys.refused, { [String(job.id)]: result.error.code });
      throw new Error(`the ${config.version} commit was refused: ${result.error.code}`);
    }
    await redis.hset(keys.done, { [ctx.scope]: config.version });
    return config.version;
  }

  const worker = new Worker<FleetJob, string | HandedBack>(
    config.queues[config.version],
    fencedProcessor<FleetJob, string>(client, {
      scope: (job) => job.data.scope,
      handlers: { [config.version]: compact },
      versionQueues: { [other]: otherQueue },
    }),
    { connection, concurrency: config.concurrency },
  );
  worker.on('completed', (job, result) => {
    if (isHandedBack(result))
      void redis.hset(keys.handedBack, { [String(job.id)]: result.handedBackTo.queue });
  });
  worker.on('failed', () => undefined);
  await worker.waitUntilReady();
  process.stdout.write('ready\n');

  process.once('SIGTERM', () => {
    void (async () => {
      await worker.close(true);
      await otherQueue.close();
      await counters.close();
      await client.close();
      process.exit(0);
    })();
  });
}

main(JSON.parse(process.env[FLEET_WORKER_ENV] ?? '{}') as FleetWorkerConfig).catch(
  (error: unknown) => {
    process.stderr.write(
      `fleet worker: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
