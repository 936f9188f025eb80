/**
 * A body over the limit is answered 413, and the client reads that answer: the server reads and
 * drops the rest of the body before it answers and closes the connection, since closing one the
 * client still writes to resets it, and the reset can reach the client before the answer. The
 * same holds for any answer sent before the body is read (an unknown token). Reading what remains
 * is bounded, in bytes and in time, so an endless body cannot hold the server. Over real sockets,
 * with the client in another process: in one process, the two sides take turns and never race.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningServer, type ListeningServer } from './listening-server.js';

const MiB = 1024 * 1024;
/** Small bounds, so the endless and the slow body reach them quickly. */
const DRAIN = { maxBytes: 4 * MiB, maxMs: 500 };

/**
 * The client: sends POST /v1/commit bodies as `mode` says and prints one JSON line per request
 * with what it read (`answer`), the error its socket ended with (`error`), whether it gave up
 * before the server ended the connection (`gaveUp`) and how many bytes it wrote.
 *   oversized N: N bodies of 2 MiB, half with Content-Length, half chunked, in 64 KiB pieces
 *                a millisecond apart (a network's pace: the body is still arriving when the
 *                limit is passed); like most HTTP clients, it reads the answer once the whole
 *                body is written.
 *   endless:     a chunked body written as fast as the socket takes it until the connection
 *                ends (gives up at 256 MiB).
 *   slow:        a 2 MiB Content-Length body sent a byte every 20 ms until an answer comes
 *                (gives up after 20 s).
 */
const CLIENT = `
const { connect } = require('node:net');
const [port, token, mode, count] = process.argv.slice(1);
const PIECE = Buffer.alloc(64 * 1024, 'a');
const CHUNK = Buffer.concat([Buffer.from(PIECE.length.toString(16) + '\\r\\n'), PIECE, Buffer.from('\\r\\n')]);
const head = (framing) =>
  'POST /v1/commit HTTP/1.1\\r\\nhost: fencegate\\r\\nauthorization: Bearer ' + token +
  '\\r\\ncontent-type: application/json\\r\\n' +
  (framing === 'chunked' ? 'transfer-encoding: chunked' : 'content-length: ' + 2 * 1024 * 1024) +
  '\\r\\n\\r\\n';
function send(framing, write) {
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1');
    const state = { framing, answer: '', error: null, gaveUp: false, written: 0 };
    let ended = false;
    socket.on('data', (data) => (state.answer += data.toString()));
    socket.on('error', (error) => (state.error = error.code));
    socket.on('close', () => {
      ended = true;
      state.written = socket.bytesWritten;
      resolve(state);
    });
    const giveUp = () => {
      state.gaveUp = true;
      socket.destroy();
    };
    socket.write(head(framing));
    write(socket, { ended: () => ended, answered: () => state.answer !== '', giveUp });
  });
}
function pieces(total, chunked, { paced = false, endless = false }) {
  return (socket, { ended, giveUp }) => {
    let sent = 0;
    const step = () => {
      while (!ended() && sent < total) {
        sent += PIECE.length;
        const more = socket.write(chunked ? CHUNK : PIECE);
        if (paced) return void setTimeout(step, 1);
        if (!more) return void socket.once('drain', step);
      }
      if (ended()) return;
      if (endless) return void giveUp();
      if (chunked) socket.write('0\\r\\n\\r\\n');
      socket.resume();
    };
    if (paced) socket.pause();
    step();
  };
}
function slow(socket, { ended, answered, giveUp }) {
  const started = Date.now();
  const timer = setInterval(() => {
    if (ended() || answered()) return void clearInterval(timer);
    if (Date.now() - started > 20000) return void (clearInterval(timer), giveUp());
    socket.write('a');
  }, 20);
}
(async () => {
  if (mode === 'oversized') {
    for (let i = 0; i < Number(count); i++) {
      const framing = i % 2 === 0 ? 'length' : 'chunked';
      console.log(JSON.stringify(await send(framing, pieces(2 * 1024 * 1024, framing === 'chunked', { paced: true }))));
    }
  } else if (mode === 'endless') {
    console.log(JSON.stringify(await send('chunked', pieces(256 * 1024 * 1024, true, { endless: true }))));
  } else {
    console.log(JSON.stringify(await send('length', slow)));
  }
})();
`;

interface Sent {
  framing: 'length' | 'chunked';
  answer: string;
  error: string | null;
  gaveUp: boolean;
  written: number;
}

function runClient(
  mode: 'oversized' | 'endless' | 'slow',
  { count = 1, bearer = token }: { count?: number; bearer?: string } = {},
): Promise<Sent[]> {
  const child = spawn(process.execPath, ['-e', CLIENT, String(port), bearer, mode, String(count)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`the client exited with ${code}`));
      else
        resolve(
          output
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as Sent),
        );
    });
  });
}

/** The status line and the error code of an answer read off the socket. */
function answerOf(sent: Sent): { status: string; code: string | undefined } {
  const [head = '', body = ''] = sent.answer.split('\r\n\r\n');
  const code = /"code":"([a-z_]+)"/.exec(body)?.[1];
  return { status: head.split('\r\n')[0] ?? '', code };
}

let server: ListeningServer;
let port: number;
let token: string;

beforeAll(async () => {
  server = await listeningServer({ bodyDrain: DRAIN });
  ({ port, token } = server);
});

afterAll(async () => {
  await server?.close();
});

describe('a body over the limit', () => {
  it('is answered 413 payload_too_large, and the client reads it every time', async () => {
    const sent = await runClient('oversized', { count: 20 });
    expect(sent).toHaveLength(20);
    for (const one of sent) {
      expect({ framing: one.framing, error: one.error, ...answerOf(one) }).toEqual({
        framing: one.framing,
        error: null,
        status: 'HTTP/1.1 413 Payload Too Large',
        code: 'payload_too_large',
      });
    }
  });

  it('that never ends is read only up to the bound, then its connection is closed', async () => {
    const [endless] = await runClient('endless');
    expect(endless!.gaveUp).toBe(false);
    // What the client wrote: the bound, the 1 MiB before the refusal, and what the sockets buffer.
    expect(endless!.written).toBeLessThan(DRAIN.maxBytes + 32 * MiB);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });

  it('that arrives too slowly is waited for only up to the bound, then answered 413', async () => {
    const [slow] = await runClient('slow');
    expect(slow!.gaveUp).toBe(false);
    expect(answerOf(slow!)).toEqual({
      status: 'HTTP/1.1 413 Payload Too Large',
      code: 'payload_too_large',
    });
  });
});

describe('a request refused before its body is read', () => {
  it('whose body never ends holds its connection only up to the bound', async () => {
    const [endless] = await runClient('endless', { bearer: 'fg_not-a-token' });
    expect(endless!.gaveUp).toBe(false);
    expect(endless!.written).toBeLessThan(DRAIN.maxBytes + 32 * MiB);
  });
});
