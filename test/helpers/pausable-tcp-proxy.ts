/**
 * A TCP proxy in front of a service that can stop passing bytes, both ways, and start again: to
 * the client a service that stalls, without touching the service (which other test files share).
 * Bytes that arrive while it is paused wait in the proxy, in order, and go on at resume; a
 * connection opened meanwhile is accepted, and its bytes wait too.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export class PausableTcpProxy {
  readonly #upstream: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  /** Writes held while paused, in the order the bytes arrived. */
  #held: (() => void)[] = [];
  #paused = false;
  #server: Server | undefined;

  constructor(upstream: string) {
    const [host = '', port = ''] = upstream.split(':');
    this.#upstream = { host, port: Number(port) };
  }

  /** Listens on a free loopback port; answers `127.0.0.1:port`. */
  async start(): Promise<string> {
    const server = createServer((client) => this.#join(client));
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    for (const write of this.#held.splice(0)) write();
  }

  async stop(): Promise<void> {
    this.resume();
    for (const socket of this.#sockets) socket.destroy();
    const server = this.#server;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #join(client: Socket): void {
    const upstream = connect(this.#upstream.port, this.#upstream.host);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.#sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    this.#forward(client, upstream);
    this.#forward(upstream, client);
  }

  #forward(from: Socket, to: Socket): void {
    from.on('data', (chunk: Buffer) => {
      const write = () => {
        if (!to.destroyed) to.write(chunk);
      };
      if (this.#paused) this.#held.push(write);
      else write();
    });
  }
}
