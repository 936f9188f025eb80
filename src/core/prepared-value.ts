/**
 * What a commit request carries, taken once at the call: each written value's JSON text and
 * fingerprint, each intent payload's JSON text, and the request fingerprint. Validation takes
 * them, so a caller that changes its objects before commit() resolves (a group commit runs on a
 * later turn of the event loop) changes nothing that is stored, fingerprinted or compared.
 * Memoized by the request's own objects so the normalized request keeps its public shape.
 */
import { fingerprint } from './canonical.js';

interface PreparedValue {
  json: string;
  fingerprint: string;
}

const preparedValues = new WeakMap<object, PreparedValue>();
const preparedPayloads = new WeakMap<object, string>();
const requestFingerprints = new WeakMap<object, string>();

/** Takes the snapshot of a written value: its JSON text (already made) and its fingerprint. */
export function rememberValueJson(write: { value: unknown }, json: string): void {
  preparedValues.set(write, { json, fingerprint: fingerprint(write.value) });
}

export function rememberPayloadJson(intent: { payload: unknown }, json: string): void {
  preparedPayloads.set(intent, json);
  rememberJson(intent.payload, json);
}

export function rememberRequestFingerprint(request: object, hash: string): void {
  requestFingerprints.set(request, hash);
}

/** A request built without validation (a test's hand-made request) is read as it is now. */
function prepared(write: { value: unknown }): PreparedValue {
  let known = preparedValues.get(write);
  if (known === undefined) {
    known = { json: JSON.stringify(write.value), fingerprint: fingerprint(write.value) };
    preparedValues.set(write, known);
  }
  return known;
}

export function valueJson(write: { value: unknown }): string {
  return prepared(write).json;
}

export function valueFingerprint(write: { value: unknown }): string {
  return prepared(write).fingerprint;
}

export function payloadJson(intent: { payload: unknown }): string {
  return preparedPayloads.get(intent) ?? JSON.stringify(intent.payload);
}

const jsonByValue = new WeakMap<object, string>();

/**
 * Remembers the JSON text a value was taken as (an intent's payload at validation, a row's payload
 * as read): a store writing the value again writes that text instead of serializing it anew.
 */
export function rememberJson(value: unknown, json: string): void {
  if (typeof value === 'object' && value !== null) jsonByValue.set(value, json);
}

export function jsonOf(value: unknown): string {
  const known = typeof value === 'object' && value !== null ? jsonByValue.get(value) : undefined;
  return known ?? JSON.stringify(value);
}

export function knownRequestFingerprint(request: object): string | undefined {
  return requestFingerprints.get(request);
}
