/** Where a body stops being JSON, as the server's invalid_request says it. */
import { describe, expect, it } from 'vitest';
import { jsonSyntaxPosition } from '../../src/server/json-syntax-position.js';

describe('the position of a JSON syntax error', () => {
  it('is the first character that cannot continue the text, its length when it ends early', () => {
    const cases: [string, number | null][] = [
      ['{"scope":}', 9],
      ['{"scope":', 9],
      ['[1,2,]', 5],
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ['tru', 0],
      ['{"a":"\\q"}', 5],
      ['[]x', 2],
      ['"abc', 0],
      ['[[1]', 4],
    ];
    for (const [text, position] of cases)
      expect([text, jsonSyntaxPosition(text)]).toEqual([text, position]);
  });

  it('is null for JSON, however nested', () => {
    for (const text of [
      '{}',
      '  true  ',
      '{"a":{"b":[1,{"c":null}]},"d":-1.5e3}',
      `${'['.repeat(5000)}${']'.repeat(5000)}`,
    ]) {
      expect(jsonSyntaxPosition(text)).toBeNull();
      expect(() => JSON.parse(text) as unknown).not.toThrow();
    }
  });
});
