/**
 * A minimal Redis connection (RESP2 over TCP) in the shape of Bun's RedisClient, so BullMQ's own
 * Bun adapter (`createBunRedisClient`) drives it. The project's tests, examples and benchmarks
 * reach the real Redis through it because no Redis driver (ioredis, node-redis) is among the
 * project's dependencies; an application would pass its own ioredis or node-redis connection.
 */
import { createConnection, type Socket } from 'node:net';
import { createBunRedisClient, type BunRedisRawClient } from 'bullmq';

type Reply = string | number | null | Error | Reply[];

interface Waiting {
  resolve(value: Reply): void;
  reject(error: Error): void;
}

export class RespRedisClient implements BunRedisRawClient {
  connected = false;
  onconnect: (() => void) | null = null;
  onclose: ((error?: Error) => void) | null = null;
  onerror: ((error: Error) => void) | null = null;
  #socket: Socket | null = null;
  #waiting: Waiting[] = [];
  #buffer: Buffer = Buffer.alloc(0);

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ host: this.host, port: this.port });
      socket.setNoDelay(true);
      this.#socket = socket;
      socket.once('connect', () => {
        this.connected = true;
        this.onconnect?.();
        resolve();
      });
      socket.on('data', (chunk) => this.#receive(chunk));
      socket.on('error', (error) => {
        if (!this.connected) reject(error);
        this.onerror?.(error);
      });
      socket.on('close', () => {
        const wasConnected = this.connected;
        this.connected = false;
        this.#socket = null;
        for (const waiting of this.#waiting.splice(0)) {
          waiting.reject(new Error('Connection closed'));
        }
        if (wasConnected) this.onclose?.();
      });
    });
  }

  close(): void {
    this.#socket?.destroy();
  }

  duplicate(): Promise<this> {
    return Promise.resolve(new RespRedisClient(this.host, this.port) as this);
  }

  send<T = unknown>(command: string, args: (string | Buffer)[]): Promise<T> {
    const socket = this.#socket;
    if (socket === null || !this.connected) {
      return Promise.reject(new Error('Connection closed'));
    }
    const parts = [command, ...args].map((part) =>
      Buffer.isBuffer(part) ? part : Buffer.from(String(part), 'utf8'),
    );
    const frames: Buffer[] = [Buffer.from(`*${parts.length}\r\n`)];
    for (const part of parts) frames.push(Buffer.from(`$${part.length}\r\n`), part, CRLF);
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ resolve: (value) => resolve(value as T), reject });
      socket.write(Buffer.concat(frames));
    });
  }

  get(key: string): Promise<string | null> {
    return this.send<string | null>('GET', [key]);
  }

  smembers(key: string): Promise<unknown[]> {
    return this.send<unknown[]>('SMEMBERS', [key]);
  }

  incr(key: string): Promise<number> {
    return this.send<number>('INCR', [key]);
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const parsed = parseReply(this.#buffer, 0);
      if (parsed === null) return;
      this.#buffer = this.#buffer.subarray(parsed.end);
      const waiting = this.#waiting.shift();
      if (parsed.value instanceof Error) waiting?.reject(parsed.value);
      else waiting?.resolve(parsed.value);
    }
  }
}

const CRLF = Buffer.from('\r\n');

/** One reply starting at `start`, or null when the buffer does not hold all of it yet. */
function parseReply(buffer: Buffer, start: number): { value: Reply; end: number } | null {
  const lineEnd = buffer.indexOf(CRLF, start);
  if (lineEnd === -1) return null;
  const line = buffer.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (String.fromCharCode(buffer[start] ?? 0)) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return null;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: Reply[] = [];
      let position = next;
      for (let i = 0; i < count; i += 1) {
        const item = parseReply(buffer, position);
        if (item === null) return null;
        items.push(item.value);
        position = item.end;
      }
      return { value: items, end: position };
    }
    default:
      throw new Error(`unexpected Redis reply type ${line}`);
  }
}

/** A BullMQ connection to the Redis at host:port. Close it with `await connection.quit()`. */
export function bullmqConnection(host: string, port: number) {
  return createBunRedisClient(new RespRedisClient(host, port));
}
