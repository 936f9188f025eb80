/**
 * Python LangGraph benchmark: a 3-node graph's steps per second and p50/p99 per step through
 * fencegate.langgraph.FencedCheckpointSaver (async, fencegate.AsyncClient) against `fencegate
 * serve` with its defaults, and through LangGraph's InMemorySaver (the baseline), in one run,
 * under LangGraph's default durability ("async") and under "sync". Target: the fenced saver adds
 * at most 3 ms to the p50 step under the default durability.
 *
 *   npm run bench -- python-langgraph [--seconds N] [--rounds N]
 *
 * The server is `node bin/fencegate.js serve` on a fresh SQLite file in a child process; the
 * graph runs in clients/python/.venv (bash clients/python/scripts/install-test-deps.sh), by
 * bench/python-langgraph.py, which prints the medians of the interleaved rounds as JSON. Once the
 * server has stopped, `verify` replays the history the Python saver wrote to its file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { violationsAt } from './verified-history.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PYTHON = join(ROOT, 'clients/python/.venv/bin/python');
const DRIVER = join(ROOT, 'bench/python-langgraph.py');
const TARGET_ADDED_P50_MS = 3;

export interface PythonLanggraphOptions {
  seconds?: number;
  rounds?: number;
}

interface SaverFigures {
  stepsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** The Python process's CPU time per step: less noisy than the rates on a busy machine. */
  cpuMsPerStep: number;
  /** The fenced saver's requests to the server per run of the graph, and its commits. */
  requestsPerRun?: number;
  commitsPerRun?: number;
}

export interface PythonLanggraphResult {
  rounds: number;
  secondsPerRound: number;
  results: {
    durability: string;
    memory: SaverFigures;
    fenced: SaverFigures;
    addedP50Ms: number;
  }[];
  /** Violations `verify` found in the server's file after the run. */
  verifyViolations: number;
}

export async function runPythonLanggraphBench(
  options: PythonLanggraphOptions = {},
): Promise<PythonLanggraphResult> {
  if (!existsSync(PYTHON)) {
    throw new Error(
      'clients/python/.venv is missing: bash clients/python/scripts/install-test-deps.sh',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-bench-python-langgraph-'));
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  const storeUrl = `sqlite:${join(dir, 'store.db')}`;
  const server = spawn(
    process.execPath,
    [join(ROOT, 'bin/fencegate.js'), 'serve', '--store', storeUrl, '--port', '0'],
    { env: { ...process.env, FENCEGATE_ADMIN_TOKEN: adminToken, FENCEGATE_LOG_LEVEL: 'warn' } },
  );
  const stop = async (): Promise<void> => {
    // A server that never started (dist/ not built, say) has exited already: no exit to wait for.
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
  };
  try {
    const url = await listening(server);
    const token = await workerToken(url, adminToken);
    const driver = spawnSync(
      PYTHON,
      [DRIVER, url, token, String(options.seconds ?? 3), String(options.rounds ?? 3)],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
    );
    if (driver.status !== 0) throw new Error(`the Python driver failed:\n${driver.stderr}`);
    const lines = driver.stdout.trim().split('\n');
    const figures = JSON.parse(lines[lines.length - 1] ?? '{}') as Omit<
      PythonLanggraphResult,
      'verifyViolations'
    >;
    await stop();
    return { ...figures, verifyViolations: await violationsAt(storeUrl) };
  } finally {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function listening(server: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const found = /fencegate listening on (http:\/\/\S+)/.exec(output);
      if (found?.[1] !== undefined) resolve(found[1]);
    });
    server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.once('exit', (code) => reject(new Error(`fencegate serve exited ${code}:\n${output}`)));
  });
}

async function workerToken(url: string, adminToken: string): Promise<string> {
  const response = await fetch(`${url}/v1/admin/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'bench', role: 'worker', label: 'python-langgraph bench' }),
  });
  if (!response.ok) throw new Error(`creating a worker token answered ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

export function formatPythonLanggraphBench(result: PythonLanggraphResult): string {
  const row = (label: string, figures: SaverFigures) =>
    `${label.padEnd(52)} ${String(figures.stepsPerSec).padStart(6)} steps/s   p50 ${figures.p50Ms.toFixed(3)} ms   p99 ${figures.p99Ms.toFixed(3)} ms   CPU ${figures.cpuMsPerStep.toFixed(3)} ms/step${
      figures.commitsPerRun === undefined
        ? ''
        : `   ${figures.requestsPerRun} requests, ${figures.commitsPerRun} commits/run`
    }`;
  const lines: string[] = [];
  for (const run of result.results) {
    lines.push(
      row(`InMemorySaver, durability ${run.durability}`, run.memory),
      row(`FencedCheckpointSaver (async, HTTP), durability ${run.durability}`, run.fenced),
      `  added p50 per step: ${run.addedP50Ms.toFixed(3)} ms`,
    );
  }
  const byDefault = result.results[0];
  if (byDefault !== undefined) {
    const met = byDefault.addedP50Ms <= TARGET_ADDED_P50_MS ? 'met' : 'not met';
    lines.push(
      `added p50 per step under the default durability: ${byDefault.addedP50Ms.toFixed(3)} ms (target ≤ ${TARGET_ADDED_P50_MS} ms: ${met})`,
    );
  }
  lines.push(`verify after the run: ${result.verifyViolations} violations`);
  lines.push(JSON.stringify({ bench: 'python-langgraph', ...result }));
  return lines.join('\n');
}
