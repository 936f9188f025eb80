/** The targets file: what it accepts, and errors that name the field but never a secret. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTargets, parseTargets } from '../../src/dispatch/index.js';
import { isFencegateError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

function problemOf(json: unknown): string {
  try {
    parseTargets(json, 'targets.json');
  } catch (error) {
    if (isFencegateError(error) && error.code === 'invalid_request') return error.message;
    throw error;
  }
  throw new Error('accepted');
}

const hook = { type: 'webhook', url: 'http://127.0.0.1:9000/hook' };

describe('targets file', () => {
  it('loads the documented shape, with a default timeout', async () => {
    const path = join(dir.path, 'targets.json');
    writeFileSync(
      path,
      JSON.stringify({
        targets: {
          'crm-webhook': { ...hook, timeoutMs: 5000, headers: { 'x-api-key': 'k' } },
          'mail.v2': { type: 'webhook', url: 'https://mail.example/send' },
        },
      }),
    );
    expect(await loadTargets(path)).toEqual({
      targets: {
        'crm-webhook': { ...hook, timeoutMs: 5000, headers: { 'x-api-key': 'k' } },
        'mail.v2': {
          type: 'webhook',
          url: 'https://mail.example/send',
          timeoutMs: 5000,
          headers: {},
        },
      },
    });
  });

  it('names the file when it is missing or not JSON', async () => {
    const missing = join(dir.path, 'missing.json');
    await expect(loadTargets(missing)).rejects.toThrow(
      `targets file ${missing} cannot be read (ENOENT)`,
    );
    const broken = join(dir.path, 'broken.json');
    writeFileSync(broken, '{"targets": ');
    await expect(loadTargets(broken)).rejects.toThrow(`targets file ${broken} is not valid JSON`);
  });

  it.each<[string, unknown, string]>([
    ['not an object', [], 'targets.json: the document must be a JSON object'],
    ['no targets', {}, 'targets.json: targets must be a JSON object'],
    ['empty targets', { targets: {} }, 'targets.json: targets must name 1 to 256 targets'],
    [
      'an unknown top-level field',
      { targets: { a: hook }, extra: 1 },
      'targets.json: extra is not a known field',
    ],
    [
      'a bad target name',
      { targets: { 'no spaces': hook } },
      'targets.json: targets.no spaces is not a valid target name',
    ],
    [
      'an unknown type',
      { targets: { a: { ...hook, type: 'smtp' } } },
      'targets.json: targets.a.type must be "webhook"',
    ],
    [
      'an unknown target field',
      { targets: { a: { ...hook, method: 'PUT' } } },
      'targets.json: targets.a.method is not a known field',
    ],
    [
      'a relative URL',
      { targets: { a: { ...hook, url: '/hook' } } },
      'targets.json: targets.a.url must be an absolute http:// or https:// URL',
    ],
    [
      'another scheme',
      { targets: { a: { ...hook, url: 'file:///etc/passwd' } } },
      'targets.json: targets.a.url must be an http:// or https:// URL, not file:',
    ],
    [
      'a timeout too small',
      { targets: { a: { ...hook, timeoutMs: 1 } } },
      'targets.json: targets.a.timeoutMs must be an integer from 10 to 600000',
    ],
    [
      'a fractional timeout',
      { targets: { a: { ...hook, timeoutMs: 10.5 } } },
      'targets.json: targets.a.timeoutMs must be an integer',
    ],
    [
      'headers not an object',
      { targets: { a: { ...hook, headers: ['x'] } } },
      'targets.json: targets.a.headers must be a JSON object',
    ],
    [
      'a bad header name',
      { targets: { a: { ...hook, headers: { 'a b': 'x' } } } },
      'targets.json: targets.a.headers.a b is not a valid header name',
    ],
    [
      'a reserved header',
      { targets: { a: { ...hook, headers: { 'Idempotency-Key': 'x' } } } },
      'targets.json: targets.a.headers.Idempotency-Key is set by the dispatcher',
    ],
    [
      'a numeric header value',
      { targets: { a: { ...hook, headers: { 'x-n': 5 } } } },
      'targets.json: targets.a.headers.x-n must be a string without line breaks',
    ],
  ])('rejects %s', (_label, json, message) => {
    expect(problemOf(json)).toContain(message);
  });

  it('never echoes a header value or a URL with credentials', () => {
    const header = problemOf({
      targets: { a: { ...hook, headers: { 'x-api-key': 's3cret\r\nx: y' } } },
    });
    expect(header).toBe(
      'targets.json: targets.a.headers.x-api-key must be a string without line breaks',
    );
    const url = problemOf({ targets: { a: { ...hook, url: 'ftp://user:s3cret@host/x' } } });
    expect(url).not.toContain('s3cret');
  });
});
