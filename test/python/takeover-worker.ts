/**
 * A TypeScript worker over HTTP, the replacement in the Python client's frozen-worker test:
 * acquires the scope (the frozen worker's lease has lapsed), reads the record and commits its own
 * value, then prints the commit result as one JSON line.
 *
 *   node --import tsx test/python/takeover-worker.ts URL TOKEN SCOPE NAME VALUE
 */
import { FencegateClient } from '../../src/client/index.js';

const [url, token, scope, name, value] = process.argv.slice(2);
if (url === undefined || token === undefined || scope === undefined || name === undefined) {
  throw new Error('usage: takeover-worker.ts URL TOKEN SCOPE NAME VALUE');
}
const client = new FencegateClient({ url, token });
const grant = await client.acquire({ scope, holder: 'ts-worker', ttlMs: 60_000 });
const record = await client.getRecord(scope, name);
const result = await client.commit({
  scope,
  fence: grant.fence,
  operationId: `ts-worker-${grant.fence}`,
  writes: [{ name, expectRevision: record.revision, value }],
});
console.log(JSON.stringify({ fence: grant.fence, result }));
