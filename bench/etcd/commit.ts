/**
 * etcd commit benchmark: in one run, a raw single-key Txn (compare the key's mod_revision, put the
 * value; what a hand-written fence check on etcd costs at the least) against fencegate's commit
 * (scope fence, holder, lease and revision checks, stored outcome, audit entry, all in one Txn),
 * one at a time and with many in flight (fencegate with group commit, as the server runs it).
 * Every in-flight lane writes its own key or scope. The contenders run interleaved for several
 * rounds so load from elsewhere hits them alike; ratios are the medians of the per-round ratios.
 * Before the run's keys are deleted, `verify` replays the history fencegate wrote under them.
 *
 *   npm run bench -- commit --store etcd://127.0.0.1:2379[,…] [--seconds 3] [--rounds 3] [--in-flight 64]
 */
import { randomUUID } from 'node:crypto';
import { CompareResult, CompareTarget, Etcd3 } from 'etcd3';
import { Fencegate } from '../../src/gate.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import { parseEtcdUrl } from '../../src/store/etcd/etcd-url.js';
import { formatStats, runConcurrent, runSequential, type RunStats } from '../stats.js';
import { requireClean, violationsIn } from '../verified-history.js';

export interface EtcdCommitBenchOptions {
  url: string;
  seconds?: number;
  rounds?: number;
  inFlight?: number;
  log?: (line: string) => void;
}

export interface EtcdCommitFigures {
  rawSequential: number;
  singleSequential: number;
  rawConcurrent: number;
  groupConcurrent: number;
  /** fencegate one at a time / raw one at a time (median of rounds); target ≥ 0.80. */
  ratioSingle: number;
  /** fencegate group commit / raw Txns in flight (median of rounds); target ≥ 1.5. */
  ratioGroup: number;
  /** Violations `verify` found in the history fencegate wrote in the run. */
  verifyViolations: number;
}

const VALUE = { summary: 'compacted memory of the workflow', facts: ['a', 'b', 'c'], n: 0 };

/** Lanes handed out to the calls in flight: each lane owns one key or scope. */
function lanePool(lanes: number): { take(): number; give(lane: number): void } {
  const free = Array.from({ length: lanes }, (_, i) => lanes - 1 - i);
  return {
    take: () => free.pop() ?? 0,
    give: (lane) => free.push(lane),
  };
}

function rawContender(client: Etcd3, prefix: string, lanes: number): (i: number) => Promise<void> {
  const revisions = new Array<number>(lanes).fill(0);
  const pool = lanePool(lanes);
  return async (i) => {
    const lane = pool.take();
    const key = Buffer.from(`${prefix}/raw/${lane}`);
    const expected = revisions[lane] ?? 0;
    const response = await client.kv.txn({
      compare: [
        expected === 0
          ? { key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 }
          : { key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: expected },
      ],
      success: [{ request_put: { key, value: Buffer.from(JSON.stringify({ ...VALUE, n: i })) } }],
    });
    if (!response.succeeded) throw new Error('the raw guarded Txn lost its guard');
    revisions[lane] = Number(response.header.revision);
    pool.give(lane);
  };
}

async function guardedContender(
  gate: Fencegate,
  name: string,
  lanes: number,
): Promise<(i: number) => Promise<void>> {
  const fences: number[] = [];
  for (let lane = 0; lane < lanes; lane += 1) {
    const grant = await gate.acquire({
      scope: `${name}-${lane}`,
      holder: 'bench',
      ttlMs: 86_400_000,
    });
    fences.push(grant.fence);
  }
  const revisions = new Array<number>(lanes).fill(0);
  const pool = lanePool(lanes);
  return async (i) => {
    const lane = pool.take();
    const revision = revisions[lane] ?? 0;
    const result = await gate.commit({
      scope: `${name}-${lane}`,
      fence: fences[lane] ?? 0,
      operationId: `${name}-${lane}-${revision}`,
      writes: [{ name: 'memory', expectRevision: revision, value: { ...VALUE, n: i } }],
    });
    if (result.outcome !== 'committed') {
      throw new Error(`fencegate rejected a fresh commit: ${result.error.code}`);
    }
    revisions[lane] = revision + 1;
    pool.give(lane);
  };
}

/**
 * The KV calls every member has started so far (Range, Txn, …), from etcd's own metrics on its
 * client port; null when a member does not serve them. Summed over members, since a call is
 * counted by the member that received it.
 */
async function kvCalls(hosts: string[]): Promise<Map<string, number> | null> {
  const calls = new Map<string, number>();
  try {
    for (const host of hosts) {
      const text = await (await fetch(`http://${host}/metrics`)).text();
      for (const match of text.matchAll(
        /^grpc_server_started_total\{grpc_method="(\w+)",grpc_service="etcdserverpb\.KV",[^}]*\} (\d+)$/gm,
      )) {
        const method = match[1] ?? '';
        calls.set(method, (calls.get(method) ?? 0) + Number(match[2]));
      }
    }
  } catch {
    return null;
  }
  return calls;
}

/** "1.00 Txn" and the like: KV calls per commit between two readings. */
function perCommit(
  before: Map<string, number> | null,
  after: Map<string, number> | null,
  commits: number,
): string {
  if (before === null || after === null || commits === 0) return 'not measured';
  const parts = [...after]
    .map(([method, count]) => [method, (count - (before.get(method) ?? 0)) / commits] as const)
    .filter(([, count]) => count > 0)
    .map(([method, count]) => `${count.toFixed(2)} ${method}`);
  return parts.length === 0 ? 'none' : parts.join(' + ');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export async function runEtcdCommitBench(
  options: EtcdCommitBenchOptions,
): Promise<EtcdCommitFigures> {
  const log = options.log ?? console.log;
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 3;
  const inFlight = options.inFlight ?? 64;
  const target = parseEtcdUrl(options.url);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const client = new Etcd3({ hosts: target.hosts.map((host) => `http://${host}`) });
  const url = `etcd://${target.hosts.join(',')}?prefix=${prefix}`;
  const single = await Fencegate.open({ store: await EtcdStore.open({ url }) });
  const group = await Fencegate.open({ store: await EtcdStore.open({ url, groupCommit: true }) });
  try {
    log(
      `etcd commit benchmark on ${target.hosts.length} member(s): ${rounds} rounds of ${seconds} s per contender, ${inFlight} in flight for the concurrent runs`,
    );
    const rawSeq = rawContender(client, `${prefix}-seq`, 1);
    const singleSeq = await guardedContender(single, 'seq', 1);
    const rawConc = rawContender(client, `${prefix}-conc`, inFlight);
    const groupConc = await guardedContender(group, 'conc', inFlight);
    const results: Record<'rawSeq' | 'singleSeq' | 'rawConc' | 'groupConc', RunStats[]> = {
      rawSeq: [],
      singleSeq: [],
      rawConc: [],
      groupConc: [],
    };
    // Warm-up: connections open, first keys created.
    await runSequential(0.3, rawSeq);
    await runSequential(0.3, singleSeq);
    for (let round = 0; round < rounds; round += 1) {
      results.rawSeq.push(await runSequential(seconds, rawSeq));
      const before = await kvCalls(target.hosts);
      results.singleSeq.push(await runSequential(seconds, singleSeq));
      const after = await kvCalls(target.hosts);
      results.rawConc.push(await runConcurrent(seconds, inFlight, rawConc));
      results.groupConc.push(await runConcurrent(seconds, inFlight, groupConc));
      log(`round ${round + 1}:`);
      log(`  ${formatStats('raw Txn, one at a time', results.rawSeq.at(-1)!)}`);
      log(`  ${formatStats('fencegate commit, one at a time', results.singleSeq.at(-1)!)}`);
      log(
        `    etcd calls per fencegate commit: ${perCommit(before, after, results.singleSeq.at(-1)!.ops)}`,
      );
      log(`  ${formatStats(`raw Txn, ${inFlight} in flight`, results.rawConc.at(-1)!)}`);
      log(
        `  ${formatStats(`fencegate group commit, ${inFlight} in flight`, results.groupConc.at(-1)!)}`,
      );
    }
    const rate = (runs: RunStats[]) => median(runs.map((run) => run.opsPerSec));
    // Both gates write under the same prefix: one replay covers them.
    const verifyViolations = await violationsIn(single.store);
    const figures: EtcdCommitFigures = {
      rawSequential: rate(results.rawSeq),
      singleSequential: rate(results.singleSeq),
      rawConcurrent: rate(results.rawConc),
      groupConcurrent: rate(results.groupConc),
      ratioSingle: median(
        results.singleSeq.map((run, i) => run.opsPerSec / (results.rawSeq[i]?.opsPerSec ?? 1)),
      ),
      ratioGroup: median(
        results.groupConc.map((run, i) => run.opsPerSec / (results.rawConc[i]?.opsPerSec ?? 1)),
      ),
      verifyViolations,
    };
    log(
      `one at a time: fencegate ${figures.singleSequential.toFixed(0)}/s vs raw ${figures.rawSequential.toFixed(0)}/s = ${figures.ratioSingle.toFixed(2)} (target ≥ 0.80)`,
    );
    log(
      `in flight: fencegate group commit ${figures.groupConcurrent.toFixed(0)}/s vs raw ${figures.rawConcurrent.toFixed(0)}/s = ${figures.ratioGroup.toFixed(2)}× (target ≥ 1.5×)`,
    );
    log(`verify after the run: ${verifyViolations} violations`);
    log(JSON.stringify(figures));
    requireClean('commit on etcd', verifyViolations);
    return figures;
  } finally {
    await single.close();
    await group.close();
    await client.delete().prefix(prefix);
    client.close();
  }
}
