/**
 * A client is pointed at a server's base URL only: a URL with a password is refused when the
 * client is made, in words that never repeat it, instead of failing each call with the URL,
 * password included, in the message.
 */
import { describe, expect, it } from 'vitest';
import { FencegateAdminClient, FencegateClient } from '../../src/client/index.js';

function refusal(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('the client was made');
}

describe('the server URL a client is made with', () => {
  it('refuses a user or password in the URL without repeating it', () => {
    const url = 'http://ops:hunter2-secret@127.0.0.1:7420';
    for (const message of [
      refusal(() => new FencegateClient({ url, token: 'fg_x' })),
      refusal(() => new FencegateAdminClient({ url, adminToken: 'adm' })),
    ]) {
      expect(message).toContain('must not hold a user or password');
      expect(message).not.toContain('hunter2');
    }
  });

  it('refuses what is not an http(s) base URL, naming what to give', () => {
    expect(refusal(() => new FencegateClient({ url: '127.0.0.1:7420', token: 't' }))).toContain(
      'http:// or https://',
    );
    expect(
      refusal(() => new FencegateClient({ url: 'http://127.0.0.1:7420/?a=1', token: 't' })),
    ).toContain('without a query or fragment');
  });

  it('takes a base URL, with or without a path, and drops trailing slashes', () => {
    expect(new FencegateClient({ url: 'http://127.0.0.1:7420//', token: 't' }).url).toBe(
      'http://127.0.0.1:7420',
    );
    expect(new FencegateClient({ url: 'https://example.test/fencegate/', token: 't' }).url).toBe(
      'https://example.test/fencegate',
    );
  });
});
