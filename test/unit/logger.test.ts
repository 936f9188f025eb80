/**
 * The server's logs: JSON lines when stdout is not a terminal (collectors parse them), readable
 * lines on a terminal (`npm start`). Either way the Authorization header and cookies are redacted.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/server/logger.js';

function sink(isTTY: boolean): { stream: Writable & { isTTY: boolean }; text(): string } {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => chunks.join('') };
}

async function logOneRequest(isTTY: boolean): Promise<string> {
  const out = sink(isTTY);
  const logger = createLogger('info', out.stream);
  logger.info(
    { reqId: 'req-1', method: 'GET', route: '/v1/scopes', status: 200, ms: 1.5 },
    'request',
  );
  logger.info(
    { req: { headers: { authorization: 'Bearer fg_secret', cookie: 'fencegate_session=s1' } } },
    'headers',
  );
  logger.flush();
  await new Promise((resolve) => setTimeout(resolve, 50));
  return out.text();
}

describe('server logs', () => {
  it('are JSON lines when stdout is not a terminal', async () => {
    const text = await logOneRequest(false);
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(2);
    const first = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(first).toMatchObject({ msg: 'request', route: '/v1/scopes', status: 200 });
    expect(text).not.toContain('fg_secret');
    expect(text).not.toContain('fencegate_session=s1');
  });

  it('are human-readable on a terminal, one line a record so a request never takes more', async () => {
    const text = await logOneRequest(true);
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/INFO.*request.*GET.*\/v1\/scopes.*200/);
    expect(text).toContain('request');
    expect(text).toContain('/v1/scopes');
    expect(text).toMatch(/INFO/);
    expect(() => JSON.parse(text.trim().split('\n')[0] ?? '') as unknown).toThrow();
    expect(text).not.toContain('fg_secret');
    expect(text).not.toContain('fencegate_session=s1');
  });
});
