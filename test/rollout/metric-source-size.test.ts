/**
 * A named metric source that answers without end: the server stops reading past the answer's
 * byte bound instead of buffering until the source's timeout (a broken or hostile source must not
 * grow the server's memory), and the reading is no number.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sourceReader } from '../../src/rollout/metric-sources.js';

const CHUNK = Buffer.alloc(64 * 1024, '1');
let server: Server;
let sent = 0;
let url = '';

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    // Digits as fast as the client reads them, until it stops reading or hangs up.
    const pump = (): void => {
      while (!response.destroyed) {
        sent += CHUNK.length;
        if (!response.write(CHUNK)) {
          response.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('stops reading an endless answer past its byte bound and reads no number', async () => {
  const read = sourceReader({ endless: { url, timeoutMs: 1500 } });
  expect(await read('endless', 'acme')).toBeNull();
  // Past 64 KiB the reader cancels; what the socket buffers took before that is a few MiB at most.
  expect(sent).toBeLessThan(8 * 2 ** 20);
});
