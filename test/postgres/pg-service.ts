/**
 * Finds the PostgreSQL the tests run against, or starts a throwaway one:
 *
 * 1. FENCEGATE_TEST_PG_URL when set (it must answer);
 * 2. the server on 127.0.0.1:5432, user postgres, database test (trust auth);
 * 3. a new cluster (initdb + pg_ctl from /usr/lib/postgresql/<version>/bin, or PATH) in a temp
 *    directory on a free loopback port, run as the `postgres` user when the tests run as root.
 *
 * FENCEGATE_TEST_PG=start skips 1 and 2 (to exercise 3).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../helpers/free-port.js';

export interface PgService {
  url: string;
  /** How it was found, for the setup log. */
  origin: string;
  stop(): Promise<void>;
}

/** A cluster of its own that a test may take down and bring back on the same port. */
export interface ThrowawayCluster extends PgService {
  /** Stops the server (fast shutdown: connections are cut), waits `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
}

const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function answers(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function findBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  }
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    return initdb === '' ? null : initdb.replace(/\/initdb$/, '');
  } catch {
    return null;
  }
}

async function startCluster(binDir: string): Promise<ThrowawayCluster> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'fencegate-pg-'));
  const run = (tool: string, args: string[]): void => {
    const command = join(binDir, tool);
    if (asRoot)
      execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
    else execFileSync(command, args, { stdio: 'pipe' });
  };
  if (asRoot) {
    // initdb refuses to run as root; the cluster belongs to the postgres user.
    execFileSync('chown', ['postgres:', dir]);
    chmodSync(dir, 0o700);
  }
  const data = join(dir, 'data');
  const port = await freePort();
  run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
    '--no-locale',
  ]);
  const start = (): void =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-o',
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=200 -c fsync=off`,
      'start',
    ]);
  start();
  const admin = new pg.Client({
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
  });
  await admin.connect();
  await admin.query('CREATE DATABASE test');
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/test`,
    origin: `a throwaway cluster started from ${binDir} on port ${port}`,
    restart: async (downMs) => {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      start();
    },
    stop: () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      return Promise.resolve();
    },
  };
}

const noop = (): Promise<void> => Promise.resolve();

/** The service, or an Error whose message says what is missing. */
export async function findOrStartPostgres(): Promise<PgService | Error> {
  const forceStart = process.env.FENCEGATE_TEST_PG === 'start';
  const explicit = process.env.FENCEGATE_TEST_PG_URL;
  if (explicit !== undefined && explicit !== '' && !forceStart) {
    const problem = await answers(explicit);
    if (problem !== null) {
      return new Error(
        `FENCEGATE_TEST_PG_URL is set but PostgreSQL does not answer there (${problem})`,
      );
    }
    return { url: explicit, origin: 'FENCEGATE_TEST_PG_URL', stop: noop };
  }
  const localProblem = forceStart ? 'skipped' : await answers(LOCAL_URL);
  if (localProblem === null)
    return { url: LOCAL_URL, origin: 'the server on 127.0.0.1:5432', stop: noop };
  const binDir = findBinDir();
  if (binDir === null) {
    return new Error(
      `no PostgreSQL for the tests: set FENCEGATE_TEST_PG_URL, or run a server on 127.0.0.1:5432 ` +
        `(user postgres, database test; it answered: ${localProblem}), or install the PostgreSQL ` +
        `server binaries (initdb and pg_ctl under /usr/lib/postgresql/<version>/bin) so the tests ` +
        `can start one`,
    );
  }
  try {
    return await startCluster(binDir);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return new Error(`starting a throwaway PostgreSQL from ${binDir} failed: ${reason}`);
  }
}

/** A new cluster of the test's own (initdb as the postgres user when run as root). */
export async function startThrowawayCluster(): Promise<ThrowawayCluster | Error> {
  const binDir = findBinDir();
  if (binDir === null) return new Error('no initdb and pg_ctl to start a PostgreSQL cluster with');
  return await startCluster(binDir);
}
