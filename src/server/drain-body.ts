/**
 * An answer sent before its request's body has all arrived (a body over the limit is refused
 * before it is read, a caller before its body is needed) first reads and drops the rest of that
 * body. Closing a connection the client is still writing to resets it, and a client that writes
 * its whole body before reading, as most do, then fails on the reset and never reads the answer.
 * The wait is bounded in bytes and in time, so an endless or a trickling body cannot hold the
 * server: past the bound the answer goes out at once and its connection is closed.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export interface BodyDrainBound {
  /** The most bytes of a body read and dropped before its answer goes out anyway. */
  maxBytes: number;
  /** The longest wait for the end of a body, in milliseconds. */
  maxMs: number;
}

export const DEFAULT_BODY_DRAIN: BodyDrainBound = { maxBytes: 16 * 1024 * 1024, maxMs: 5000 };

export function drainBodiesBeforeAnswers(app: FastifyInstance, bound: BodyDrainBound): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || raw.readableEnded) {
      done(null, payload);
      return;
    }
    void dropRestOfBody(raw, bound).then((ended) => {
      // Part of the body is still to come: the connection cannot carry another request.
      if (!ended) void reply.header('connection', 'close');
      done(null, payload);
    });
  });
}

/** Reads what remains of the body and drops it: true once it ended, false at the bound. */
function dropRestOfBody(raw: IncomingMessage, bound: BodyDrainBound): Promise<boolean> {
  return new Promise((resolve) => {
    let dropped = 0;
    const settle = (ended: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > bound.maxBytes) settle(false);
    };
    const onEnd = () => settle(true);
    // The client went away (or the stream failed): nothing more will come.
    const onClose = () => settle(raw.readableEnded);
    const timer = setTimeout(() => settle(false), bound.maxMs);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('close', onClose);
    raw.resume();
  });
}
