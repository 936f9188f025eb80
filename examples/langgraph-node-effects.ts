/**
 * A LangGraph node that must notify a CRM once. It stages the notification with stageEffect; the
 * saver commits it as an intent with the node's writes, under the thread's fence, and the
 * dispatcher delivers it with the effect key as Idempotency-Key. The node fails once after
 * staging (nothing is committed), is run again (the same task, so the same key), and a later node
 * reads the CRM's reference with awaitEffect. The CRM is called once.
 *
 *   npx tsx examples/langgraph-node-effects.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { Fencegate } from 'fencegate';
import { Dispatcher, effectorsFromTargets, parseTargets } from 'fencegate/dispatch';
import { FencedCheckpointSaver, awaitEffect, stageEffect } from 'fencegate/langgraph';

// A stand-in for the CRM: counts every call and answers each key with its own id.
let calls = 0;
const crm = createServer((req, res) => {
  calls += 1;
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `crm-${String(req.headers['idempotency-key']).slice(-6)}` }));
  });
});
await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
const crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}/hook`;

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const dispatcher = new Dispatcher({
  api: gate,
  dispatcherId: 'example-dispatcher',
  effectors: effectorsFromTargets(
    parseTargets({ targets: { crm: { type: 'webhook', url: crmUrl, timeoutMs: 2000 } } }),
  ),
  pollIntervalMs: 20,
});
dispatcher.start();

const State = Annotation.Root({
  ticket: Annotation<string>(),
  notified: Annotation<string>(),
  receipt: Annotation<string>(),
});
let failOnce = true;
const graph = new StateGraph(State)
  .addNode('notify', (state, config) => {
    const effectKey = stageEffect(config, 'ticket-opened', 'crm', { ticket: state.ticket });
    console.log(`notify: staged ${effectKey}`);
    if (failOnce) {
      failOnce = false;
      throw new Error('the model call after staging timed out');
    }
    return { notified: effectKey };
  })
  .addNode('confirm', async (state, config) => {
    const outcome = await awaitEffect(config, state.notified, { timeoutMs: 5_000 });
    return {
      receipt: outcome.status === 'delivered' ? String(outcome.providerRef) : outcome.status,
    };
  })
  .addEdge(START, 'notify')
  .addEdge('notify', 'confirm')
  .addEdge('confirm', END)
  .compile({ checkpointer: new FencedCheckpointSaver({ gate }) });

const config = { configurable: { thread_id: 'ticket-42' }, durability: 'sync' as const };
try {
  await graph.invoke({ ticket: 'T-42' }, config);
} catch (error) {
  console.log(`first run failed: ${(error as Error).message}; nothing was committed`);
}
const state = await graph.invoke(null, config); // the same task runs again
console.log(`second run: receipt ${state.receipt}`);

await dispatcher.stop();
console.log(`crm: called ${calls} time(s)`);
await gate.close();
crm.closeAllConnections();
await new Promise<void>((resolve) => crm.close(() => resolve()));
process.exitCode = calls === 1 && state.receipt.startsWith('crm-') ? 0 : 1;
