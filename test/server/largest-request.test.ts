/**
 * A worker's largest legal requests keep the server answering others: a scope whose records hold
 * far more than one answer's byte budget, read by several of the largest `reads` and record pages
 * a worker may send at once, leaves /healthz answering within 1 s and the process's memory
 * bounded. Before the byte budget, each such `reads` answer held every page's records whole
 * (64 pages of 15 records of 256 KiB: 240 MiB) and stalled the event loop for seconds; each
 * page of 1,000 records held the whole scope (20 MiB here).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { startProbe } from './healthz-probe.js';
import { startWorkerServer, type WorkerServer } from '../helpers/worker-server.js';

const SCOPE = 'big/scope';
/** Enough records for every page of the largest request to be full without the budget. */
const RECORDS = 80;
/** A value's JSON text: a string just under the 256 KiB a value may hold. */
const VALUE = 'v'.repeat(DEFAULT_LIMITS.maxValueBytes - 16);
const PAGES = DEFAULT_LIMITS.maxReads;
/** Each page's limit: the most that keeps the request's records within one listing's limit. */
const PAGE_LIMIT = Math.floor(DEFAULT_LIMITS.maxListLimit / PAGES);
const IN_FLIGHT = 4;
/**
 * Well under the multi-second stalls an answer without a byte budget causes (12.5 s for one
 * request), and above what four test files at once on two cores cost /healthz (500-700 ms).
 */
const MAX_HEALTHZ_MS = 1_000;
/** What the requests in flight may add to the process's resident memory. */
const MAX_GROWTH_BYTES = 200 * 1024 * 1024;

let server: WorkerServer;
let url: string;
let send: WorkerServer['send'];

const nameOf = (n: number) => `r/${String(n).padStart(3, '0')}`;

beforeAll(async () => {
  server = await startWorkerServer(SCOPE);
  ({ url, send } = server);
  const { fence } = server;
  // Three values per commit fit the 1 MiB body.
  for (let first = 0; first < RECORDS; first += 3) {
    const names = [first, first + 1, first + 2].filter((n) => n < RECORDS).map(nameOf);
    const commit = await send('POST', '/v1/commit', {
      scope: SCOPE,
      fence,
      operationId: `seed-${first}`,
      writes: names.map((name) => ({ name, expectRevision: 0, value: VALUE })),
    });
    expect(commit.status).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** 64 pages of distinct ranges, each as long as one request allows. */
const LARGEST_READS = {
  pages: Array.from({ length: PAGES }, (_, n) => ({ after: nameOf(n), limit: PAGE_LIMIT })),
};

/** The worst /healthz latency while IN_FLIGHT of the largest requests run, twice over. */
async function worstLatencyUnderLoad(path: string, answerBytes: number[]): Promise<number> {
  const readAll = async (request: () => Promise<Response>) => {
    const answer = await request();
    expect(answer.status).toBe(200);
    answerBytes.push((await answer.arrayBuffer()).byteLength);
  };
  const probe = startProbe(`${url}/healthz`);
  // A process takes a while to start on a busy machine: the load begins once the probe measures.
  await probe.answering;
  let latencies: number[];
  try {
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, (_, n) =>
          readAll(() =>
            n % 2 === 0
              ? send('POST', `${path}/reads`, LARGEST_READS)
              : send('GET', `${path}/records?limit=${DEFAULT_LIMITS.maxListLimit}`),
          ),
        ),
      );
    }
  } finally {
    latencies = await probe.stop();
  }
  expect(latencies.length).toBeGreaterThan(3);
  return Math.max(...latencies);
}

it('keeps /healthz within 1 s and memory bounded under the largest reads and pages', async () => {
  const path = `/v1/scopes/${encodeURIComponent(SCOPE)}`;
  const answerBytes: number[] = [];
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  // A machine loaded by other work may stop any process for a moment: the bound must hold in one
  // of three tries. Without the byte budget every try stalled the server for seconds.
  const worst: number[] = [];
  try {
    while (worst.length < 3 && !worst.some((ms) => ms < MAX_HEALTHZ_MS)) {
      worst.push(await worstLatencyUnderLoad(path, answerBytes));
    }
  } finally {
    clearInterval(sampler);
  }
  expect(
    Math.min(...worst),
    `worst /healthz latency of each try: ${worst.map(Math.round).join(', ')} ms`,
  ).toBeLessThan(MAX_HEALTHZ_MS);
  // One answer: the budget and one record past it.
  const oneAnswer = DEFAULT_LIMITS.maxPageBytes + DEFAULT_LIMITS.maxValueBytes;
  expect(Math.max(...answerBytes)).toBeLessThan(oneAnswer * 1.1);
  expect(
    peak - baseline,
    `memory grew by ${Math.round((peak - baseline) / 2 ** 20)} MiB`,
  ).toBeLessThan(MAX_GROWTH_BYTES);
}, 60_000);
