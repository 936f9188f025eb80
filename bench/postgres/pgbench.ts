/**
 * PostgreSQL's own pgbench as an outside reference: a C client with no pool and no event loop,
 * running a custom script against the same database. Finds the binary, runs it, parses its report.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The pgbench to run: `$PGBENCH`, else `pgbench` on the PATH, else the newest packaged one. */
export function findPgbench(): string | null {
  const explicit = process.env.PGBENCH;
  const candidates = explicit !== undefined && explicit !== '' ? [explicit] : ['pgbench'];
  const packaged = '/usr/lib/postgresql';
  if (candidates[0] === 'pgbench' && existsSync(packaged)) {
    const versions = readdirSync(packaged)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => `${packaged}/${version}/bin/pgbench`));
  }
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    if (probe.error === undefined && probe.status === 0) return candidate;
  }
  return null;
}

export interface PgbenchRun {
  /** pgbench's `tps` (without the initial connection time). */
  tps: number;
  latencyAverageMs: number;
  transactions: number;
  failed: number;
  version: string;
}

/**
 * libpq takes the same URL, minus fencegate's own `schema` parameter; the password travels in
 * PGPASSWORD rather than on the command line.
 */
function libpqConnection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  parsed.searchParams.delete('schema');
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (parsed.password !== '') {
    env.PGPASSWORD = decodeURIComponent(parsed.password);
    parsed.password = '';
  }
  return { dbname: parsed.toString(), env };
}

function figure(output: string, pattern: RegExp): number | null {
  const match = pattern.exec(output);
  return match?.[1] === undefined ? null : Number(match[1]);
}

/** Runs `pgbench -n -M prepared -c CLIENTS -j THREADS -T SECONDS -f SCRIPT` and parses its report. */
export async function runPgbench(options: {
  binary: string;
  url: string;
  scriptPath: string;
  clients: number;
  threads: number;
  seconds: number;
}): Promise<PgbenchRun> {
  const { dbname, env } = libpqConnection(options.url);
  const args = [
    '-n',
    '-M',
    'prepared',
    '-c',
    String(options.clients),
    '-j',
    String(options.threads),
    '-T',
    String(options.seconds),
    '-f',
    options.scriptPath,
    dbname,
  ];
  const { stdout } = await run(options.binary, args, { env, maxBuffer: 16 * 1024 * 1024 });
  // PostgreSQL 14+: "tps = N (without initial connection time)"; older: "(excluding connections establishing)".
  const tps =
    figure(stdout, /^tps = ([\d.]+) \((?:without initial connection time|excluding)/m) ??
    figure(stdout, /^tps = ([\d.]+)/m);
  if (tps === null) throw new Error(`could not read pgbench's tps from:\n${stdout}`);
  return {
    tps,
    latencyAverageMs: figure(stdout, /^latency average = ([\d.]+) ms/m) ?? Number.NaN,
    transactions: figure(stdout, /^number of transactions actually processed: (\d+)/m) ?? 0,
    failed: figure(stdout, /^number of failed transactions: (\d+)/m) ?? 0,
    version: /^pgbench \((\S+)/m.exec(stdout)?.[1] ?? '',
  };
}
