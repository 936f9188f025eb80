/**
 * The JSON text and fingerprint of a written value, computed once per request: validation needs
 * the size, the store the text, the request fingerprint and the record the hash. Memoized by the
 * write object itself so the normalized request keeps its public shape.
 */
import { fingerprint } from './canonical.js';

interface PreparedValue {
  json: string;
  fingerprint: string | undefined;
}

const prepared = new WeakMap<object, PreparedValue>();

export function rememberValueJson(write: object, json: string): void {
  prepared.set(write, { json, fingerprint: undefined });
}

export function valueJson(write: { value: unknown }): string {
  const known = prepared.get(write);
  if (known !== undefined) return known.json;
  const json = JSON.stringify(write.value);
  prepared.set(write, { json, fingerprint: undefined });
  return json;
}

export function valueFingerprint(write: { value: unknown }): string {
  let known = prepared.get(write);
  if (known === undefined) {
    known = { json: JSON.stringify(write.value), fingerprint: undefined };
    prepared.set(write, known);
  }
  known.fingerprint ??= fingerprint(write.value);
  return known.fingerprint;
}
