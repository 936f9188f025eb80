/**
 * The load generator of the HTTP benchmark: autocannon, typed for the few options used here. It
 * runs in the benchmark's own process; the server under test runs in a child process.
 */
import { createRequire } from 'node:module';

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** Called before each request: returns the body to send (distinct per request). */
  body?: () => string;
}

export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with a status other than the expected one, plus socket errors and timeouts. */
  failures: number;
  total: number;
}

interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  setupRequest?: (request: { body?: string }) => { body?: string };
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
}

type Autocannon = (
  options: {
    url: string;
    connections: number;
    duration: number;
    requests: AutocannonRequest[];
  },
  done: (error: Error | null, result: AutocannonResult) => void,
) => unknown;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export function runLoad(
  url: string,
  request: LoadRequest,
  options: { connections: number; seconds: number },
): Promise<LoadResult> {
  const { body } = request;
  const spec: AutocannonRequest = {
    method: request.method,
    path: request.path,
    ...(request.headers === undefined ? {} : { headers: request.headers }),
    ...(body === undefined ? {} : { setupRequest: (raw) => ({ ...raw, body: body() }) }),
  };
  return new Promise((resolve, reject) => {
    autocannon(
      { url, connections: options.connections, duration: options.seconds, requests: [spec] },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        resolve({
          requestsPerSec: result['2xx'] / options.seconds,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          failures: result.non2xx + result.errors + result.timeouts,
          total: result.requests.total,
        });
      },
    );
  });
}
