/** `npm run bench -- <name> [flags]`: runs one benchmark and prints its figures. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatCutoverBench, runCutoverBench } from './cutover.js';
import { formatDispatchResult, runDispatchBench } from './dispatch.js';
import { runSqliteCommitBench } from './sqlite-commit.js';

const USAGE = `usage: npm run bench -- commit [--seconds N] [--in-flight N]
       npm run bench -- commit --store postgres://… [--seconds N]
       npm run bench -- commit --store etcd://host:port[,host:port…] [--seconds N] [--in-flight N]
       npm run bench -- dispatch [--seconds N]
       npm run bench -- cutover [--store postgres://…]
       npm run bench -- verify [--entries N] [--sqlite]`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === 'verify') {
    // The verify benchmark is a script with flags of its own.
    const script = fileURLToPath(new URL('./verify.ts', import.meta.url));
    return (
      spawnSync(process.execPath, ['--import', 'tsx', script, ...rest], { stdio: 'inherit' })
        .status ?? 1
    );
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      store: { type: 'string', default: 'sqlite' },
      seconds: { type: 'string', default: '3' },
      'in-flight': { type: 'string', default: '64' },
    },
  });
  const seconds = Number(values.seconds);
  const inFlight = Number(values['in-flight']);
  switch (name) {
    case 'commit':
      if (values.store.startsWith('sqlite')) {
        await runSqliteCommitBench({ seconds, inFlight });
        return 0;
      }
      if (values.store.startsWith('etcd://')) {
        const { runEtcdCommitBench } = await import('./etcd/commit.js');
        await runEtcdCommitBench({ url: values.store, seconds, inFlight });
        return 0;
      }
      return runPostgres(values.store, seconds, inFlight);
    case 'dispatch':
      for (const dispatchers of [1, 4] as const) {
        console.log(formatDispatchResult(await runDispatchBench({ seconds, dispatchers })));
      }
      return 0;
    case 'cutover':
      console.log(formatCutoverBench(await runCutoverBench({ store: values.store })));
      return 0;
    default:
      console.error(USAGE);
      return 2;
  }
}

async function runPostgres(url: string, seconds: number, inFlight: number): Promise<number> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    console.error(USAGE);
    return 2;
  }
  const { runPostgresCommitBench } = await import('./postgres/commit.js');
  await runPostgresCommitBench({ url, seconds, inFlight });
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
