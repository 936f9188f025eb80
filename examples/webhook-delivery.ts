/**
 * A worker commits a record and, in the same fenced commit, the intent to notify a CRM webhook.
 * The dispatcher delivers the intent with its effectKey as Idempotency-Key; a receiver that has
 * already seen the key answers without applying it twice.
 *
 *   npx tsx examples/webhook-delivery.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Fencegate } from 'fencegate';
import { Dispatcher, effectorsFromTargets, parseTargets } from 'fencegate/dispatch';

// A stand-in for the CRM: applies each Idempotency-Key once and answers with its own id.
const applied = new Map<string, string>();
const crm = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const key = String(req.headers['idempotency-key']);
    if (!applied.has(key)) applied.set(key, `crm-msg-${applied.size + 1}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: applied.get(key) }));
  });
});
await new Promise<void>((resolve) => crm.listen(0, '127.0.0.1', resolve));
const crmUrl = `http://127.0.0.1:${(crm.address() as AddressInfo).port}/hook`;

const gate = await Fencegate.open({ store: 'sqlite::memory:' });
const scope = 'wf-123/memory';

// The worker: acquire, then commit the summary and the notification together, or neither.
const grant = await gate.acquire({ scope, holder: 'worker-a', ttlMs: 30_000 });
const committed = await gate.commit({
  scope,
  fence: grant.fence,
  operationId: 'compact-wf-123',
  writes: [{ name: 'summary', expectRevision: 0, value: { facts: ['handoff'] } }],
  intents: [
    { effectKey: 'notify-crm-wf-123', target: 'crm-webhook', payload: { workflow: 'wf-123' } },
  ],
});
console.log(
  `worker: ${committed.outcome}; intent ${JSON.stringify(committed.outcome === 'committed' ? committed.intents : [])}`,
);

// The operator's targets (normally a file: loadTargets(path)) name the only URLs ever called.
const targets = parseTargets({
  targets: { 'crm-webhook': { type: 'webhook', url: crmUrl, timeoutMs: 2000 } },
});
const dispatcher = new Dispatcher({
  api: gate,
  dispatcherId: 'example-dispatcher',
  effectors: effectorsFromTargets(targets),
  pollIntervalMs: 20,
});

dispatcher.start();
let intent = await gate.getIntent('notify-crm-wf-123');
for (let i = 0; intent?.status !== 'delivered' && i < 250; i++) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  intent = await gate.getIntent('notify-crm-wf-123');
}
await dispatcher.stop();

console.log(
  `dispatcher: ${intent?.effectKey} ${intent?.status} after ${intent?.attempts} attempt(s), providerRef ${intent?.providerRef}`,
);
console.log(`crm: applied ${applied.size} effect(s): ${JSON.stringify([...applied])}`);

await gate.close();
crm.closeAllConnections();
await new Promise<void>((resolve) => crm.close(() => resolve()));
process.exitCode = intent?.status === 'delivered' ? 0 : 1;
