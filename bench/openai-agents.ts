/**
 * OpenAI Agents session benchmark: one session write (`addItems` of one message, what a runner
 * stores per item of a turn) again and again on one session, on three sessions in one run:
 *
 *  - MemorySession, the SDK's in-memory session (the baseline);
 *  - FencedSession in process, a Fencegate on a SQLite file with its defaults;
 *  - FencedSession over HTTP: a fencegate server on such a file in this process, the session
 *    through FencegateClient with a worker token.
 *
 * Each write is one fenced commit that expects the history head (one more read only when another
 * writer moved it). Interleaved rounds (`--rounds`), medians; the added p50 per write is the
 * fenced p50 minus MemorySession's of the same round. Before each SQLite file is closed (the
 * library's, the server's), `verify` replays its history.
 *
 *   npm run bench -- openai-agents [--seconds N] [--rounds N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySession, type Session } from '@openai/agents';
import type { FencegateApi } from '../src/api.js';
import { Fencegate } from '../src/gate.js';
import { FencedSession } from '../src/integrations/openai-agents/index.js';
import { servedWorker } from './served-worker.js';
import { runSequential, type RunStats } from './stats.js';
import { violationsIn } from './verified-history.js';

export interface OpenAiAgentsBenchOptions {
  seconds?: number;
  rounds?: number;
}

export interface OpenAiAgentsBenchResult {
  sessions: { session: string; writesPerSec: number; p50Ms: number; p99Ms: number }[];
  addedP50Ms: { inProcess: number; overHttp: number };
  /** Violations `verify` found in the two files' histories after the run. */
  verifyViolations: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

async function writes(session: Session, seconds: number): Promise<RunStats> {
  return await runSequential(seconds, (i) =>
    session.addItems([{ role: 'user', content: `message ${i}` }]),
  );
}

export async function runOpenAiAgentsBench(
  options: OpenAiAgentsBenchOptions = {},
): Promise<OpenAiAgentsBenchResult> {
  const seconds = options.seconds ?? 3;
  const rounds = options.rounds ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-sessions-'));
  const gate = await Fencegate.open({ store: `sqlite:${join(dir, 'local.db')}` });
  const served = await servedWorker(dir);
  const { client } = served;
  const claim = (on: FencegateApi, sessionId: string) =>
    FencedSession.claim(on, { sessionId, holder: 'bench' });
  const figures: Record<string, RunStats[]> = { memory: [], inProcess: [], overHttp: [] };
  let verifyViolations: number;
  try {
    for (let round = 0; round < rounds; round += 1) {
      figures.memory!.push(await writes(new MemorySession(), seconds));
      const local = await claim(gate, `local-${round}`);
      figures.inProcess!.push(await writes(local, seconds));
      await local.release();
      const remote = await claim(client, `remote-${round}`);
      figures.overHttp!.push(await writes(remote, seconds));
      await remote.release();
    }
    verifyViolations = (await served.violations()) + (await violationsIn(gate.store));
  } finally {
    await served.close();
    await gate.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const names: Record<string, string> = {
    memory: 'MemorySession',
    inProcess: 'FencedSession, in process',
    overHttp: 'FencedSession, over HTTP',
  };
  const p50 = (key: string) => median(figures[key]!.map((stats) => stats.p50Ms));
  return {
    sessions: Object.entries(figures).map(([key, stats]) => ({
      session: names[key]!,
      writesPerSec: median(stats.map((s) => s.opsPerSec)),
      p50Ms: p50(key),
      p99Ms: median(stats.map((s) => s.p99Ms)),
    })),
    addedP50Ms: {
      inProcess: p50('inProcess') - p50('memory'),
      overHttp: p50('overHttp') - p50('memory'),
    },
    verifyViolations,
  };
}

export function formatOpenAiAgentsBench(result: OpenAiAgentsBenchResult): string {
  const rows = result.sessions.map(
    (s) =>
      `${s.session.padEnd(28)} ${s.writesPerSec.toFixed(0).padStart(8)} writes/s   p50 ${s.p50Ms.toFixed(3)} ms   p99 ${s.p99Ms.toFixed(3)} ms`,
  );
  const { inProcess, overHttp } = result.addedP50Ms;
  rows.push(
    `added p50 per session write: in process ${inProcess.toFixed(3)} ms (target <= 2), over HTTP ${overHttp.toFixed(3)} ms (target <= 3)`,
  );
  rows.push(`verify after the run: ${result.verifyViolations} violations`);
  rows.push(JSON.stringify({ bench: 'openai-agents', ...result }));
  return rows.join('\n');
}
