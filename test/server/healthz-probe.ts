/** A /healthz probe in a process of its own, for the tests that hold the server busy. */
import { spawn } from 'node:child_process';

/**
 * Probes /healthz from another process, so the probe's own HTTP work does not wait on the
 * server's event loop: what is measured is how long the server takes to answer. Until stdin
 * closes, it prints each latency (ms) on a line.
 */
const PROBE = `
const url = process.argv[1];
let open = true;
process.stdin.on('end', () => { open = false; }).resume();
(async () => {
  while (open) {
    const start = performance.now();
    await (await fetch(url)).arrayBuffer();
    process.stdout.write(String(performance.now() - start) + '\\n');
  }
})();
`;

export function startProbe(url: string): {
  /** Settles once the probe has had its first answer: it runs, and the server answers it. */
  answering: Promise<void>;
  stop(): Promise<number[]>;
} {
  const child = spawn(process.execPath, ['-e', PROBE, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  let answered!: () => void;
  const answering = new Promise<void>((resolve) => (answered = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('\n')) answered();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    answering,
    async stop() {
      child.stdin.end();
      await exited;
      return output
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    },
  };
}
