/**
 * Runs one rollout command against a store and is killed with SIGKILL part way through by
 * interrupted-rollout.test.ts. Arguments: STORE_URL start|rollback.
 */
import { Fencegate } from '../../src/gate.js';
import { openChunked } from '../cutover/chunked-store.js';
import { ROLLOUT } from './rollout-fixture.js';

const [url, command] = process.argv.slice(2);
const gate = await Fencegate.open({ store: await openChunked(url!) });
process.stdout.write('ready\n');
if (command === 'start') await gate.rollouts.start(ROLLOUT);
else await gate.rollouts.rollback({ rolloutId: ROLLOUT.rolloutId! });
await gate.close();
process.stdout.write('finished\n');
