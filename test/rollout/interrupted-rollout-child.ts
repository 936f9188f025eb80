/**
 * Runs one rollout command against a store and is killed with SIGKILL part way through by
 * interrupted-rollout.test.ts. Arguments: STORE_URL start|rollback.
 *
 * It pauses after each page of a list and each chunk of moves: a page or a chunk of a few dozen
 * scopes takes well under a millisecond, and the test, which kills it once the store shows the
 * point it waits for, must have the time to do so before the next one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Fencegate } from '../../src/gate.js';
import { openChunked } from '../cutover/chunked-store.js';
import { ROLLOUT } from './rollout-fixture.js';

/** The pause after each page or chunk, in ms. */
const PACE_MS = 25;

const [url, command] = process.argv.slice(2);
const store = await openChunked(url!);
const move = store.moveCutoverChunk.bind(store);
store.moveCutoverChunk = async (...args) => {
  const handled = await move(...args);
  await sleep(PACE_MS);
  return handled;
};
const gate = await Fencegate.open({ store });
process.stdout.write('ready\n');
if (command === 'start') await gate.rollouts.start(ROLLOUT);
else await gate.rollouts.rollback({ rolloutId: ROLLOUT.rolloutId! });
await gate.close();
process.stdout.write('finished\n');
