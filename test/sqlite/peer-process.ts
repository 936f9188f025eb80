/** Starts sqlite-peer.ts on a SQLite file: another process to hold its write lock or abandon. */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CommitResult } from '../../src/types.js';

export interface PeerAnswer {
  done: string;
  result?: CommitResult;
}

export interface Peer {
  /** Sends a command (`lock`, `unlock`, `abandon ID`); resolves with its answer line. */
  send(command: string): Promise<PeerAnswer>;
  /** Ends the process (committing a lock it still holds). */
  stop(): Promise<void>;
}

export function startPeer(path: string): Peer {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./sqlite-peer.ts', import.meta.url).pathname, path],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const waiting = new Map<string, ((line: PeerAnswer) => void)[]>();
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = JSON.parse(text) as PeerAnswer;
    waiting.get(line.done)?.shift()?.(line);
  });
  return {
    send(command) {
      const name = command.split(' ')[0] ?? command;
      return new Promise((resolve) => {
        waiting.set(name, [...(waiting.get(name) ?? []), resolve]);
        child.stdin.write(`${command}\n`);
      });
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await exited;
    },
  };
}
