/**
 * A loopback TCP proxy in front of PostgreSQL that a test controls, for connection faults:
 *
 * - `stop()` closes every connection and stops listening: the next statement cannot be sent.
 * - `cutAfterNextReply()` forwards the next statement to the server but swallows the server's
 *   reply up to its ReadyForQuery message (by then the statement's transaction has committed on the
 *   server) and then cuts that connection: the client learns nothing of the outcome. Given a text,
 *   the statement is the next one whose message carries it (a prepared statement's name, say).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** ReadyForQuery: 'Z', length 5, transaction status byte. */
function endsWithReadyForQuery(buffer: Buffer): boolean {
  const n = buffer.length;
  return (
    n >= 6 &&
    buffer[n - 6] === 0x5a &&
    buffer[n - 5] === 0 &&
    buffer[n - 4] === 0 &&
    buffer[n - 3] === 0 &&
    buffer[n - 2] === 5
  );
}

export class TcpProxy {
  readonly #upstreamHost: string;
  readonly #upstreamPort: number;
  #server: Server | null = null;
  #sockets = new Set<Socket>();
  #cutArmed = false;
  /** What the armed statement's message must carry; null for any statement. */
  #cutMark: Buffer | null = null;
  #cutDone: (() => void) | null = null;
  port = 0;

  constructor(upstreamHost: string, upstreamPort: number) {
    this.#upstreamHost = upstreamHost;
    this.#upstreamPort = upstreamPort;
  }

  /** Starts listening (again) on the same port once it has one. */
  start(): Promise<void> {
    const server = createServer((client) => this.#accept(client));
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        const address = server.address();
        if (address !== null && typeof address === 'object') this.port = address.port;
        resolve();
      });
    });
  }

  #accept(client: Socket): void {
    const upstream = connect(this.#upstreamPort, this.#upstreamHost);
    this.#sockets.add(client);
    this.#sockets.add(upstream);
    let swallowing = false;
    let swallowed = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      if (
        this.#cutArmed &&
        !swallowing &&
        (this.#cutMark === null || chunk.includes(this.#cutMark))
      ) {
        // This connection carries the armed statement: its reply will be swallowed.
        this.#cutArmed = false;
        swallowing = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!swallowing) {
        client.write(chunk);
        return;
      }
      swallowed = Buffer.concat([swallowed, chunk]);
      if (endsWithReadyForQuery(swallowed)) {
        client.destroy();
        upstream.destroy();
        this.#cutDone?.();
        this.#cutDone = null;
      }
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  }

  /** Arms the cut; the returned promise resolves once the server's reply was swallowed. */
  cutAfterNextReply(carrying?: string): Promise<void> {
    this.#cutArmed = true;
    this.#cutMark = carrying === undefined ? null : Buffer.from(carrying);
    return new Promise((resolve) => {
      this.#cutDone = resolve;
    });
  }

  /** Stops listening and closes every proxied connection. */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    const server = this.#server;
    this.#server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
