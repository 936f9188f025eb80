/**
 * A rollout driver in a process of its own, as `fencegate serve` runs it, killed with SIGKILL by
 * rollout-driver-kill.test.ts. Arguments: STORE_URL HOLDER. Prints one JSON line per action.
 */
import { RolloutDriver } from '../../src/rollout/driver.js';
import { openStore } from '../../src/store/open.js';

const [url, holder] = process.argv.slice(2);
const store = await openStore(url!);
new RolloutDriver({
  store,
  holder: holder!,
  leaseMs: 1000,
  intervalMs: 100,
  onAction: (action) => process.stdout.write(`${JSON.stringify(action)}\n`),
  onError: (error) => process.stderr.write(`${String(error)}\n`),
}).start();
// The driver's timer does not keep a process alive (a server's sockets do): this one must.
setInterval(() => undefined, 1 << 30);
process.stdout.write('ready\n');
