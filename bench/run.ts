/** `npm run bench -- <name> [flags]`: runs one benchmark and prints its figures. */
import { parseArgs } from 'node:util';
import { formatCutoverBench, runCutoverBench } from './cutover.js';
import { runSqliteCommitBench } from './sqlite-commit.js';

const USAGE = `usage: npm run bench -- commit [--store sqlite|postgres://…] [--seconds N] [--in-flight N]
       npm run bench -- cutover`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      store: { type: 'string', default: 'sqlite' },
      seconds: { type: 'string', default: '3' },
      'in-flight': { type: 'string', default: '64' },
    },
  });
  const seconds = Number(values.seconds);
  const inFlight = Number(values['in-flight']);
  switch (positionals[0]) {
    case 'commit':
      if (values.store.startsWith('sqlite')) {
        await runSqliteCommitBench({ seconds, inFlight });
        return 0;
      }
      break;
    case 'cutover':
      console.log(formatCutoverBench(await runCutoverBench()));
      return 0;
    default:
      break;
  }
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
