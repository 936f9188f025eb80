/**
 * One dispatcher process for multi-process.test.ts: runs the targets-file dispatcher on a shared
 * store (its own clock: the host's for SQLite, the database's for PostgreSQL) until every intent
 * is delivered, then prints its counters as JSON.
 *
 *   node --import tsx dispatcher-process.ts STORE_URL TARGETS_FILE DISPATCHER_ID TOTAL
 */
import { startDispatcherFromTargets } from '../../src/dispatch/index.js';
import { Fencegate } from '../../src/gate.js';

const [url, targetsFile, dispatcherId, totalText] = process.argv.slice(2);
if (url === undefined || targetsFile === undefined || dispatcherId === undefined) {
  throw new Error('usage: dispatcher-process.ts STORE_URL TARGETS_FILE DISPATCHER_ID TOTAL');
}
const total = Number(totalText);
const gate = await Fencegate.open({ store: url });
const running = await startDispatcherFromTargets({
  api: gate,
  targetsFile,
  dispatcherId,
  tuning: { claimTtlMs: 1000, pollIntervalMs: 10, batchSize: 4, backoff: { initialMs: 50 } },
});
const giveUpAt = Date.now() + 25_000;
for (;;) {
  const delivered = await gate.listIntents({ status: 'delivered', limit: 1000 });
  if (delivered.items.length >= total) break;
  if (Date.now() > giveUpAt)
    throw new Error(`${dispatcherId}: only ${delivered.items.length} of ${total} delivered`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await running.stop();
const stats = running.dispatcher.stats;
process.stdout.write(
  JSON.stringify({
    dispatcherId,
    outcomes: stats.outcomes,
    staleCompletions: stats.staleCompletions,
    deliveries: stats.deliveries,
  }),
);
await gate.close();
