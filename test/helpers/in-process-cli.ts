/** Runs the fencegate command line in this process, collecting what it prints. */
import { main } from '../../src/cli/main.js';

export async function inProcessCli(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env,
  });
  return { code, stdout, stderr };
}
