/** Runs the fencegate command line in this process, collecting what it prints. */
import { inProcessCli } from '../helpers/in-process-cli.js';

export function cli(...argv: string[]) {
  return inProcessCli(argv);
}
