/**
 * Runs the built CLI (bin/fencegate.js → dist/) as a child process, the way a user would. Tests
 * wait on what the process prints, never on wall-clock sleeps.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/fencegate.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a CLI command to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  child: ChildProcess;
  /** http://HOST:PORT from the startup line. */
  url: string;
  /** Everything printed so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves when stdout or stderr contains `text`. */
  waitFor(text: string | RegExp, stream?: 'stdout' | 'stderr'): Promise<string>;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

const LISTENING = /^fencegate listening on (http:\/\/\S+)$/m;

/**
 * Starts `fencegate serve` with the given flags and resolves once it prints its startup line.
 * `launcher` runs node under another program (e.g. `['strace', '-f', …]`).
 */
export async function startServe(
  args: string[],
  env: Record<string, string> = {},
  launcher: string[] = [],
): Promise<ServerProcess> {
  const [command, ...prefix] = [...launcher, process.execPath];
  const child = spawn(command, [...prefix, BIN, 'serve', ...args], {
    env: { ...process.env, FENCEGATE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  const waiters: { test: () => string | undefined; resolve: (match: string) => void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = waiter.test();
      if (match !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out.stdout += chunk;
    check();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    out.stderr += chunk;
    check();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

  const waitFor = (text: string | RegExp, stream?: 'stdout' | 'stderr'): Promise<string> =>
    new Promise((resolve, reject) => {
      const test = () => {
        const haystacks = stream === undefined ? [out.stdout, out.stderr] : [out[stream]];
        for (const haystack of haystacks) {
          if (typeof text === 'string') {
            if (haystack.includes(text)) return text;
          } else {
            const match = text.exec(haystack);
            if (match !== null) return match[0];
          }
        }
        return undefined;
      };
      waiters.push({ test, resolve });
      check();
      void exited.then((code) =>
        reject(
          new Error(
            `fencegate exited (${code}) before printing ${String(text)}\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`,
          ),
        ),
      );
    });

  const line = await waitFor(LISTENING, 'stdout');
  const url = LISTENING.exec(line)?.[1] ?? '';
  return {
    child,
    url,
    output: () => ({ ...out }),
    waitFor,
    exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
