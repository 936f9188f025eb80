/**
 * Runs one cutover against a store and is killed with SIGKILL part way through by
 * interrupted-cutover.test.ts. Arguments: STORE_URL CUTOVER_ID SCOPE_COUNT.
 */
import { Fencegate } from '../../src/gate.js';
import { openChunked } from './chunked-store.js';

const [url, cutoverId, countText] = process.argv.slice(2);
const count = Number(countText);
const gate = await Fencegate.open({ store: await openChunked(url!) });
process.stdout.write('ready\n');
await gate.cutover({
  cutoverId: cutoverId!,
  toPolicy: 'v8',
  holder: 'controller-v8',
  scopes: Array.from({ length: count }, (_, i) => `wf-${i}/memory`),
});
await gate.close();
process.stdout.write('finished\n');
