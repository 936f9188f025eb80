/**
 * `npm run bench -- <name> [flags]`: runs one benchmark and prints its figures. A benchmark that
 * writes a fencegate store verifies it after the run and exits non-zero on any violation
 * (verified-history.ts), once its figures are printed.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatCutoverBench, runCutoverBench } from './cutover.js';
import {
  dispatcherCounts,
  formatDispatchResult,
  runDispatchBench,
  type DispatchBenchResult,
} from './dispatch.js';
import { runHttpBench } from './http.js';
import { medianOf } from './stats.js';
import { runScaleBench } from './scale.js';
import { runSqliteCommitBench } from './sqlite-commit.js';
import { formatWalPages, runWalPagesBench } from './sqlite-wal-pages.js';
import { requireClean } from './verified-history.js';

const USAGE = `usage: npm run bench -- all [--seconds N] [--store postgres://…] [--scopes N] [--memory-seconds N]
       npm run bench -- commit [--seconds N] [--in-flight N]
       npm run bench -- commit --store postgres://… [--seconds N] [--baseline-ref GIT_REF]
       npm run bench -- commit --store etcd://host:port[,host:port…] [--seconds N] [--in-flight N]
       npm run bench -- dispatch [--seconds N] [--rounds N] [--dispatchers 1,4]
       npm run bench -- cutover [--store postgres://…]
       npm run bench -- rollout [--store postgres://…] [--scopes N[,N…]] [--seconds N]
       npm run bench -- verify [--entries N] [--sqlite]
       npm run bench -- cancel-scope [COUNT…]
       npm run bench -- wal-pages
       npm run bench -- http [--seconds N] [--connections N] [--profile DIR]
       npm run bench -- scale [--seconds N] [--scopes N] [--memory-seconds N] [--profile DIR]
       npm run bench -- bullmq [--jobs N] [--concurrency N]
       npm run bench -- langgraph [--seconds N] [--rounds N]
       npm run bench -- python-langgraph [--seconds N] [--rounds N]
       npm run bench -- node-effects [--seconds N] [--rounds N]
       npm run bench -- langgraph-memory [--seconds N] [--rounds N]
       npm run bench -- openai-agents [--seconds N] [--rounds N]`;

/** The large store of `all` and `scale`: scopes of ten records each. */
const LARGE_SCOPES = 1_000_000;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'verify' || name === 'cancel-scope') {
    // These benchmarks are scripts with arguments of their own.
    const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
    return (
      spawnSync(process.execPath, ['--import', 'tsx', script, ...rest], { stdio: 'inherit' })
        .status ?? 1
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      store: { type: 'string', default: 'sqlite' },
      // No defaults here: each benchmark has its own, and a flag given must win even when it
      // equals another benchmark's default.
      seconds: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      'in-flight': { type: 'string', default: '64' },
      connections: { type: 'string', default: '64' },
      profile: { type: 'string' },
      // No default: `all` and `scale` default to 1,000,000 scopes, `rollout` to its own sizes.
      scopes: { type: 'string' },
      'memory-seconds': { type: 'string' },
      jobs: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '16' },
      'baseline-ref': { type: 'string' },
      dispatchers: { type: 'string' },
    },
  });
  const secondsOr = (fallback: number): number =>
    values.seconds === undefined ? fallback : Number(values.seconds);
  const seconds = secondsOr(3);
  const inFlight = Number(values['in-flight']);
  const rounds = Number(values.rounds);
  switch (name) {
    case 'all': {
      const { DEFAULT_POSTGRES, runAllBench } = await import('./all.js');
      await runAllBench({
        seconds: secondsOr(2),
        postgresUrl: values.store.startsWith('postgres') ? values.store : DEFAULT_POSTGRES,
        memorySeconds: Number(values['memory-seconds'] ?? 30),
        largeScopes: Number(values.scopes ?? LARGE_SCOPES),
      });
      return 0;
    }
    case 'commit':
      if (values.store.startsWith('sqlite')) {
        await runSqliteCommitBench({ seconds, inFlight });
        return 0;
      }
      if (values.store.startsWith('etcd://')) {
        const { runEtcdCommitBench } = await import('./etcd/commit.js');
        await runEtcdCommitBench({
          url: values.store,
          seconds,
          inFlight,
          rounds,
        });
        return 0;
      }
      return runPostgres(values.store, seconds, inFlight, values['baseline-ref']);
    case 'dispatch': {
      // Interleaved rounds, so a change in the machine's load hits both counts alike; medians.
      const counts = dispatcherCounts(values.dispatchers ?? '1,4');
      const runs = new Map<number, DispatchBenchResult[]>(counts.map((count) => [count, []]));
      for (let round = 0; round < rounds; round++) {
        for (const dispatchers of counts) {
          const result = await runDispatchBench({ seconds, dispatchers });
          console.log(formatDispatchResult(result));
          runs.get(dispatchers)!.push(result);
        }
      }
      const results = counts.map((dispatchers) => {
        const of = (figure: (result: DispatchBenchResult) => number): number =>
          medianOf(runs.get(dispatchers)!.map(figure));
        return {
          dispatchers,
          rounds,
          intentsPerSec: Math.round(of((r) => r.intentsPerSec)),
          rawPostsPerSec: Math.round(of((r) => r.rawPostsPerSec)),
          ratio: Math.round(1000 * of((r) => r.intentsPerSec / r.rawPostsPerSec)) / 1000,
          cpuUsPerIntent: Math.round(of((r) => r.cpuUsPerIntent)),
          rawCpuUsPerPost: Math.round(of((r) => r.rawCpuUsPerPost)),
          cpuRatio: Math.round(1000 * of((r) => r.rawCpuUsPerPost / r.cpuUsPerIntent)) / 1000,
          p50Ms: of((r) => r.p50Ms),
          p99Ms: of((r) => r.p99Ms),
          claimedAtCommitShare: of((r) => r.claimedAtCommitShare),
          violations: Math.max(...runs.get(dispatchers)!.map((r) => r.violations)),
        };
      });
      console.log(JSON.stringify({ bench: 'dispatch', results }));
      requireClean('dispatch', Math.max(...results.map((result) => result.violations)));
      return 0;
    }
    case 'http':
      await runHttpBench({
        seconds: secondsOr(5),
        connections: Number(values.connections),
        ...(values.profile === undefined ? {} : { profileDir: values.profile }),
      });
      return 0;
    case 'scale':
      await runScaleBench({
        seconds,
        largeScopes: Number(values.scopes ?? LARGE_SCOPES),
        memorySeconds: Number(values['memory-seconds'] ?? 600),
        ...(values.profile === undefined ? {} : { profileDir: values.profile }),
      });
      return 0;
    case 'cutover': {
      const result = await runCutoverBench({ store: values.store });
      console.log(formatCutoverBench(result));
      requireClean('cutover', result.verifyViolations);
      return 0;
    }
    case 'rollout': {
      // SQLite and PostgreSQL side by side in one run: an embedded file, then `--store` when it
      // is a postgres:// URL, else the local server.
      const { DEFAULT_POSTGRES } = await import('./all.js');
      const { formatRolloutBench, runRolloutBench } = await import('./rollout.js');
      const sizes = values.scopes === undefined ? undefined : values.scopes.split(',').map(Number);
      const postgres = values.store.startsWith('postgres') ? values.store : DEFAULT_POSTGRES;
      const results = [];
      for (const store of ['sqlite', postgres]) {
        const result = await runRolloutBench({
          store,
          seconds: secondsOr(10),
          ...(sizes === undefined ? {} : { sizes }),
        });
        console.log(formatRolloutBench(result).trimEnd());
        results.push(result);
      }
      console.log(JSON.stringify({ bench: 'rollout', results }));
      requireClean('rollout', sum(results.map((result) => result.verifyViolations)));
      return 0;
    }
    case 'wal-pages': {
      const runs = await runWalPagesBench();
      console.log(formatWalPages(runs));
      requireClean('wal-pages', sum(runs.map((run) => run.verifyViolations)));
      return 0;
    }
    case 'bullmq': {
      // Loaded on demand: BullMQ is an optional peer, needed by this benchmark only.
      const { formatBullmqBench, runBullmqBench } = await import('./bullmq.js');
      const jobs = Number(values.jobs);
      const concurrency = Number(values.concurrency);
      const result = await runBullmqBench({ jobs, concurrency });
      console.log(formatBullmqBench(result));
      requireClean('bullmq', result.verifyViolations);
      return 0;
    }
    case 'langgraph': {
      // Loaded on demand: LangGraph is an optional peer, needed by this benchmark only.
      const { formatLanggraphBench, runLanggraphBench } = await import('./langgraph.js');
      const result = await runLanggraphBench({ seconds, rounds });
      console.log(formatLanggraphBench(result));
      requireClean('langgraph', result.verifyViolations);
      return 0;
    }
    case 'node-effects': {
      // Loaded on demand: LangGraph is an optional peer, needed by this benchmark only.
      const { formatNodeEffectsBench, runNodeEffectsBench } = await import('./node-effects.js');
      const result = await runNodeEffectsBench({ seconds, rounds });
      console.log(formatNodeEffectsBench(result));
      requireClean('node-effects', result.verifyViolations);
      return 0;
    }
    case 'langgraph-memory': {
      // Loaded on demand: LangGraph is an optional peer, needed by this benchmark only.
      const { formatMemoryBench, runMemoryBench } = await import('./langgraph-memory.js');
      const result = await runMemoryBench({ seconds, rounds });
      console.log(formatMemoryBench(result));
      requireClean('langgraph-memory', result.verifyViolations);
      return 0;
    }
    case 'openai-agents': {
      // Loaded on demand: the OpenAI Agents SDK is an optional peer, needed by this benchmark only.
      const { formatOpenAiAgentsBench, runOpenAiAgentsBench } = await import('./openai-agents.js');
      const result = await runOpenAiAgentsBench({ seconds, rounds });
      console.log(formatOpenAiAgentsBench(result));
      requireClean('openai-agents', result.verifyViolations);
      return 0;
    }
    case 'python-langgraph': {
      // Runs LangGraph in the Python test venv, against a `fencegate serve` it starts.
      const { formatPythonLanggraphBench, runPythonLanggraphBench } =
        await import('./python-langgraph.js');
      const result = await runPythonLanggraphBench({ seconds, rounds });
      console.log(formatPythonLanggraphBench(result));
      requireClean('python-langgraph', result.verifyViolations);
      return 0;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

async function runPostgres(
  url: string,
  seconds: number,
  inFlight: number,
  baselineRef?: string,
): Promise<number> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    console.error(USAGE);
    return 2;
  }
  const { runPostgresCommitBench } = await import('./postgres/commit.js');
  await runPostgresCommitBench({ url, seconds, inFlight, baselineRef });
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
