/**
 * Dispatch benchmark: intents per second delivered to a local webhook receiver, and the latency
 * from commit to the delivered record, with 1 or 4 dispatchers on one SQLite file.
 *
 *   npx tsx bench/dispatch.ts [--seconds N] [--dispatchers 1,4] [--profile DIR]
 *
 * Two phases per run:
 *  - throughput: a producer keeps a backlog of pending intents (16 per commit) and the dispatchers
 *    drain it for `seconds`; intents/s = delivered outcomes recorded in that window / seconds.
 *  - latency: a producer commits at half the measured throughput (at most 1,000/s) for `seconds`;
 *    latency = store time of the delivered record - store time of the commit, per intent.
 * The dispatchers run in this process on the producer's store, as `fencegate serve --dispatch`
 * does: a commit claims its intents for a dispatcher with room (core/claim-at-commit.ts), and
 * wakes them for the rest; their poll interval is the default 500 ms, only a safety net. The receiver (node:http, 200 with an id, deduplicating by Idempotency-Key) runs here
 * too. Raw baseline, in the same run: this process POSTing the same payloads to the same receiver
 * with fetch, as many in flight as the dispatchers deliver at once (dispatchers x batch of 16).
 * Both also as CPU time of this process per POST and per delivered intent (producer included),
 * which a busy machine disturbs less than the rates. After the run, `verify` of the store's history.
 * `--profile DIR` profiles the throughput phase and prints this process's µs per delivered intent
 * by the code that spent them (bench/phase-profile.ts); the profile goes to DIR.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Dispatcher, webhookEffector } from '../src/dispatch/index.js';
import { verifyStore } from '../src/audit/verify.js';
import { Fencegate } from '../src/gate.js';
import { startPhaseProfile, timeByOwner } from './phase-profile.js';
import { requireClean } from './verified-history.js';

export interface DispatchBenchOptions {
  /** Per phase. Default 3. */
  seconds?: number;
  dispatchers: 1 | 4;
  /**
   * The producer's rate in the latency phase, intents per second. Default: half the measured
   * throughput, at most 1,000/s. A fixed rate compares two versions' latencies at one load.
   */
  latencyRatePerSec?: number;
  /** Profile the throughput phase: µs per delivered intent by owner, and the profile to this file. */
  profileFile?: string;
}

export interface DispatchBenchResult {
  dispatchers: number;
  intentsPerSec: number;
  /** Raw POSTs per second to the same receiver at the same concurrency. */
  rawPostsPerSec: number;
  /** CPU time of this process per raw POST (receiver included), in microseconds. */
  rawCpuUsPerPost: number;
  /** CPU time of this process per delivered intent (producer and receiver included). */
  cpuUsPerIntent: number;
  /** The producer's rate in the latency phase. */
  latencyRatePerSec: number;
  latencySamples: number;
  p50Ms: number;
  p99Ms: number;
  /** Of the intents committed in the latency phase, the share claimed by their own commit. */
  claimedAtCommitShare: number;
  /** Violations `verify` found in the store's history after the run (0 when clean). */
  violations: number;
  /** With `profileFile`: µs of this process per delivered intent in the throughput phase, by owner. */
  usPerIntentBy?: Record<string, number>;
}

const INTENTS_PER_COMMIT = 16;
const BATCH_SIZE = 16;
const BACKLOG = 2000;

export async function runDispatchBench(
  options: DispatchBenchOptions,
): Promise<DispatchBenchResult> {
  const seconds = options.seconds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-dispatch-'));
  const receiver = await startReceiver();
  const path = join(dir, 'dispatch.db');
  const producer = await Fencegate.open({ store: `sqlite:${path}` });
  const dispatchers: Dispatcher[] = [];
  try {
    const effector = webhookEffector({
      type: 'webhook',
      url: receiver.url,
      timeoutMs: 5000,
      headers: {},
    });
    const { postsPerSec: rawPostsPerSec, cpuUsPerPost: rawCpuUsPerPost } = await rawPostRate(
      receiver.url,
      options.dispatchers * BATCH_SIZE,
      seconds,
    );
    for (let i = 0; i < options.dispatchers; i++) {
      dispatchers.push(
        new Dispatcher({
          api: producer.forTenant(producer.tenant),
          dispatcherId: `bench-${i}`,
          effectors: { bench: effector },
          batchSize: BATCH_SIZE,
        }),
      );
    }
    const grant = await producer.acquire({
      scope: 'bench/dispatch',
      holder: 'producer',
      ttlMs: 3_600_000,
    });
    let seq = 0;
    const commit = async (count: number): Promise<void> => {
      const intents = Array.from({ length: count }, () => ({
        effectKey: `bench-${++seq}`,
        target: 'bench',
        payload: { n: seq, text: 'a small payload for the receiver' },
      }));
      const result = await producer.commit({
        scope: 'bench/dispatch',
        fence: grant.fence,
        operationId: `bench-op-${seq}`,
        intents,
      });
      if (result.outcome !== 'committed') throw new Error(`commit rejected: ${result.error.code}`);
    };
    // Throughput: keep a backlog, measure what the dispatchers record in the window.
    while (seq < BACKLOG) await commit(INTENTS_PER_COMMIT);
    const delivered = (): number => dispatchers.reduce((n, d) => n + d.stats.outcomes.delivered, 0);
    // The backlog from counters, not a query: the producer must not slow the store down.
    const backlog = (): number => seq - delivered();
    const profiling = options.profileFile === undefined ? undefined : await startPhaseProfile();
    for (const d of dispatchers) d.start();
    const start = performance.now();
    const cpuBefore = process.cpuUsage();
    const before = delivered();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      if (backlog() < 1000) {
        for (let i = 0; i < 8; i++) await commit(INTENTS_PER_COMMIT);
      } else {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const cpu = process.cpuUsage(cpuBefore);
    const cpuUsPerIntent = (cpu.user + cpu.system) / Math.max(1, delivered() - before);
    const intentsPerSec = (delivered() - before) / ((performance.now() - start) / 1000);
    const usPerIntentBy =
      profiling === undefined
        ? undefined
        : perIntent(
            timeByOwner(await profiling.stop(options.profileFile), dispatchOwner),
            delivered() - before,
          );
    await drain(producer);

    // Latency: commit at a steady rate below capacity, then read each intent's timestamps.
    const rate =
      options.latencyRatePerSec ?? Math.min(1000, Math.max(10, Math.floor(intentsPerSec / 2)));
    const firstKey = seq + 1;
    const tickMs = 10;
    const latencyStart = performance.now();
    let committed = 0;
    while (performance.now() - latencyStart < seconds * 1000) {
      const due = Math.floor(((performance.now() - latencyStart) / 1000) * rate) - committed;
      if (due > 0) {
        const count = Math.min(due, INTENTS_PER_COMMIT);
        await commit(count);
        committed += count;
      }
      await new Promise((resolve) => setTimeout(resolve, tickMs));
    }
    await drain(producer);
    const latencies: number[] = [];
    for (let key = firstKey; key <= seq; key++) {
      const intent = await producer.getIntent(`bench-${key}`);
      if (intent?.status === 'delivered') latencies.push(intent.updatedAt - intent.createdAt);
    }
    latencies.sort((a, b) => a - b);
    const { violations } = await verifyStore(producer.store);
    const claimedAtCommitShare =
      (await claimedAtCommit(producer, firstKey)) / Math.max(1, seq - firstKey + 1);
    const pick = (q: number): number =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return {
      dispatchers: options.dispatchers,
      intentsPerSec,
      rawPostsPerSec,
      rawCpuUsPerPost,
      cpuUsPerIntent,
      latencyRatePerSec: rate,
      latencySamples: latencies.length,
      p50Ms: pick(0.5),
      p99Ms: pick(0.99),
      violations: violations.length,
      claimedAtCommitShare,
      ...(usPerIntentBy === undefined ? {} : { usPerIntentBy }),
    };
  } finally {
    await Promise.all(dispatchers.map((d) => d.stop()));
    await producer.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Who in this process caused a profiled sample of the delivery phase. */
function dispatchOwner(url: string, functionName: string): string | null {
  if (url.includes('/bench/dispatch.')) {
    return functionName === 'receive' ? 'receiver (bench)' : 'producer loop (bench)';
  }
  if (/\/src\/dispatch\/(webhook-|keep-alive-post)/.test(url)) return 'webhook POSTs (client)';
  if (url.includes('/src/dispatch/')) return 'dispatcher';
  if (url.includes('/src/store/')) return 'store: claims, completions, commits';
  if (url.includes('/src/core/')) return 'core: plans, validation';
  return url.includes('/src/') ? 'gate and the rest of src' : null;
}

function perIntent(time: Map<string, number>, intents: number): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const [owner, us] of [...time].sort((a, b) => b[1] - a[1])) {
    figures[owner] = Math.round(us / Math.max(1, intents));
  }
  return figures;
}

/**
 * POSTs per second with `inFlight` requests in flight, as hand-written code would send them:
 * node:http with a keep-alive agent (Node 20's global fetch reached about a third of this).
 */
async function rawPostRate(
  url: string,
  inFlight: number,
  seconds: number,
): Promise<{ postsPerSec: number; cpuUsPerPost: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  const post = (n: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ n, text: 'a small payload for the receiver' });
      const sent = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'idempotency-key': `raw-${n}`,
          },
        },
        (answer) => {
          answer.resume();
          answer.on('end', () => resolve(answer.statusCode ?? 0));
        },
      );
      sent.on('error', reject);
      sent.end(body);
    });
  let posted = 0;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const lane = async (): Promise<void> => {
    while (performance.now() < end) if ((await post(++n)) === 200) posted += 1;
  };
  const start = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: inFlight }, lane));
  const cpu = process.cpuUsage(cpuBefore);
  agent.destroy();
  return {
    postsPerSec: posted / ((performance.now() - start) / 1000),
    cpuUsPerPost: (cpu.user + cpu.system) / Math.max(1, posted),
  };
}

/** How many intents from bench-`firstKey` on were claimed by their commit (audit reason at_commit). */
async function claimedAtCommit(gate: Fencegate, firstKey: number): Promise<number> {
  let count = 0;
  let afterSeq: number | undefined;
  for (;;) {
    const page = await gate.audit({
      kind: 'intent',
      outcome: 'claimed',
      limit: 1000,
      ...(afterSeq === undefined ? {} : { afterSeq }),
    });
    for (const entry of page.items) {
      if (entry.reason === 'at_commit' && Number(entry.effectKey?.slice(6)) >= firstKey) count++;
    }
    if (page.nextAfterSeq === null) return count;
    afterSeq = page.nextAfterSeq;
  }
}

/** Waits until nothing is pending or claimed. */
async function drain(gate: Fencegate): Promise<void> {
  for (;;) {
    const [pending, claimed] = await Promise.all([
      gate.listIntents({ status: 'pending', limit: 1 }),
      gate.listIntents({ status: 'claimed', limit: 1 }),
    ]);
    if (pending.items.length === 0 && claimed.items.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const seen = new Map<string, string>();
  const server = createServer(function receive(req, res) {
    req.resume();
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      let id = seen.get(key);
      if (id === undefined) {
        id = `rcpt-${seen.size + 1}`;
        seen.set(key, id);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function formatDispatchResult(result: DispatchBenchResult): string {
  return [
    `dispatch, ${result.dispatchers} dispatcher${result.dispatchers === 1 ? ' ' : 's'}`.padEnd(26),
    `${result.intentsPerSec.toFixed(0).padStart(6)} intents/s delivered`,
    `(raw POSTs ${result.rawPostsPerSec.toFixed(0)}/s, ratio ${(result.intentsPerSec / result.rawPostsPerSec).toFixed(2)};`,
    `CPU ${result.cpuUsPerIntent.toFixed(0)} µs/intent vs ${result.rawCpuUsPerPost.toFixed(0)} µs/POST)`,
    `  commit->delivered at ${result.latencyRatePerSec}/s:`,
    `p50 ${result.p50Ms.toFixed(0)} ms  p99 ${result.p99Ms.toFixed(0)} ms  (${result.latencySamples} intents);`,
    `${(100 * result.claimedAtCommitShare).toFixed(0)} % claimed by their commit;`,
    `verify: ${result.violations} violations`,
  ].join(' ');
}

/** `--dispatchers 1,4`: the dispatcher counts to run, each 1 or 4. */
export function dispatcherCounts(list: string): (1 | 4)[] {
  return list.split(',').map((item) => {
    const count = Number(item);
    if (count !== 1 && count !== 4) throw new Error(`--dispatchers takes 1 and 4, not ${item}`);
    return count;
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      dispatchers: { type: 'string', default: '1,4' },
      profile: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  for (const dispatchers of dispatcherCounts(values.dispatchers)) {
    const profileFile =
      values.profile === undefined
        ? undefined
        : join(values.profile, `dispatch-${dispatchers}.cpuprofile`);
    const result = await runDispatchBench({
      seconds,
      dispatchers,
      ...(profileFile === undefined ? {} : { profileFile }),
    });
    console.log(formatDispatchResult(result));
    if (result.usPerIntentBy !== undefined) {
      console.log(`  µs per delivered intent: ${JSON.stringify(result.usPerIntentBy)}`);
    }
    requireClean('dispatch', result.violations);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
