import { createHash, hash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by code unit, no whitespace, numbers as JSON prints them.
 * Two values that are equal as JSON have the same canonical text, whatever their key order.
 * Every commit takes it of each written value and of the request, so it builds the text in one
 * pass, without the intermediate arrays of a map/filter/join.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    // undefined, functions and symbols have no JSON form; validation keeps them out of values.
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  let first = true;
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
    first = false;
  }
  return `${text}}`;
}

/** One-shot hashing (Node 20.12 and later) skips the Hash object a digest otherwise builds. */
const oneShot = typeof hash === 'function';

export function sha256Hex(text: string): string {
  return oneShot ? hash('sha256', text, 'hex') : createHash('sha256').update(text).digest('hex');
}

/** sha256 of the canonical JSON of a value: the record fingerprint of SEMANTICS.md. */
export function fingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
