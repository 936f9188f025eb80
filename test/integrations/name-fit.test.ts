/**
 * fitName: names that fit are kept, longer ones are shortened, and a shortened name never equals a
 * name that was not shortened. The vectors are shared with the Python client's fit_name, so both
 * languages give one id the same names.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { escapeName, fitName } from '../../src/integrations/name-escape.js';

interface Vector {
  case: string;
  name: string;
  limit: number;
  fitted: string;
}

const VECTORS = JSON.parse(
  readFileSync(new URL('../fixtures/fit-name-vectors.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

describe('fitName', () => {
  it.each(VECTORS.vectors.map((vector) => [vector.case, vector] as const))('%s', (_, vector) => {
    expect(fitName(vector.name, vector.limit)).toBe(vector.fitted);
  });

  it('never gives a name of the limit the shortened form of a longer name', () => {
    const longer = `celery/${escapeName('t'.repeat(300))}`;
    const shortened = fitName(longer);
    expect(shortened).toHaveLength(256);

    const lookalike = fitName(shortened);

    expect(lookalike).not.toBe(shortened);
    expect(lookalike).toHaveLength(256);
  });

  it('keeps every name made of escaped pieces that fits', () => {
    const escaped = `celery/${escapeName('a/@-'.repeat(20))}/${escapeName('-'.repeat(32))}`;
    expect(escaped.length).toBeLessThanOrEqual(256);
    expect(fitName(escaped)).toBe(escaped);
  });
});
