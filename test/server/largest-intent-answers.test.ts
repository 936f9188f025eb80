/**
 * The largest intent answers a worker may ask for stay within one answer's byte budget: with far
 * more payload bytes due than the budget, a page of 1,000 intents and a claim of 1,000 each
 * answer at most the budget and one payload past it, and the claims that follow take every
 * intent exactly once. Before the budget, each answered every intent whole (10 MiB here).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { startWorkerServer, type WorkerServer } from '../helpers/worker-server.js';

const SCOPE = 'big/intents';
const INTENTS = 40;
/** A payload's JSON text: a string just under the 256 KiB a payload may hold. */
const PAYLOAD = 'p'.repeat(DEFAULT_LIMITS.maxValueBytes - 16);
/** One answer: the budget and one payload past it, with room for the intents' other fields. */
const ONE_ANSWER = (DEFAULT_LIMITS.maxPageBytes + DEFAULT_LIMITS.maxValueBytes) * 1.1;

let server: WorkerServer;
let send: WorkerServer['send'];

beforeAll(async () => {
  server = await startWorkerServer(SCOPE);
  ({ send } = server);
  const { fence } = server;
  // Three payloads per commit fit the 1 MiB body.
  for (let first = 0; first < INTENTS; first += 3) {
    const keys = [first, first + 1, first + 2].filter((n) => n < INTENTS).map((n) => `fx-${n}`);
    const commit = await send('POST', '/v1/commit', {
      scope: SCOPE,
      fence,
      operationId: `seed-${first}`,
      intents: keys.map((effectKey) => ({ effectKey, target: 'crm', payload: PAYLOAD })),
    });
    expect(commit.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await server?.close();
});

async function answerOf(response: Promise<Response>): Promise<{
  bytes: number;
  json: { items: { effectKey: string }[]; nextCursor?: string | null };
}> {
  const answer = await response;
  expect(answer.status).toBe(200);
  const text = await answer.text();
  return { bytes: Buffer.byteLength(text), json: JSON.parse(text) as never };
}

it('a page of 1,000 intents answers within the byte budget and pages on by its cursor', async () => {
  const seen: string[] = [];
  let cursor: string | null | undefined;
  for (let page = 0; page < INTENTS && cursor !== null; page += 1) {
    const query = cursor === undefined ? '' : `&cursor=${cursor}`;
    const { bytes, json } = await answerOf(send('GET', `/v1/intents?limit=1000${query}`));
    expect(bytes).toBeLessThan(ONE_ANSWER);
    expect(json.items.length).toBeGreaterThan(0);
    seen.push(...json.items.map((intent) => intent.effectKey));
    cursor = json.nextCursor;
  }
  expect(cursor).toBeNull();
  expect(new Set(seen).size).toBe(INTENTS);
  expect(seen.length).toBe(INTENTS);
});

it('a claim of 1,000 intents answers within the byte budget; the claims that follow take the rest', async () => {
  const claimed: string[] = [];
  for (let claim = 0; claim < INTENTS; claim += 1) {
    const { bytes, json } = await answerOf(
      send('POST', '/v1/intents/claim', { dispatcher: 'd1', ttlMs: 600_000, limit: 1000 }),
    );
    expect(bytes).toBeLessThan(ONE_ANSWER);
    if (json.items.length === 0) break;
    claimed.push(...json.items.map((intent) => intent.effectKey));
  }
  expect(claimed.length).toBe(INTENTS);
  expect(new Set(claimed).size).toBe(INTENTS);
});
