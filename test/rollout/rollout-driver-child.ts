/**
 * A rollout driver in a process of its own, as `fencegate serve` runs it, killed with SIGKILL by
 * rollout-driver-kill.test.ts. Arguments: STORE_URL HOLDER [CHUNK]. With CHUNK (a SQLite URL) the
 * store moves that many scopes per cutover chunk, so a rollback takes many chunks and can be
 * killed between two of them. Prints one JSON line per action.
 */
import { RolloutDriver } from '../../src/rollout/driver.js';
import { openStore } from '../../src/store/open.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { parseSqliteUrl } from '../../src/store/sqlite/sqlite-url.js';

const [url, holder, chunk] = process.argv.slice(2);
const store =
  chunk === undefined
    ? await openStore(url!)
    : SqliteStore.open({ path: parseSqliteUrl(url!).path, cutoverChunk: Number(chunk) });
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
