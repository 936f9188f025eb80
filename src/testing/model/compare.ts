/** Comparing a store's answers with the model's; any difference is a ModelDivergence. */
import { isDeepStrictEqual } from 'node:util';
import { isFencegateError } from '../../errors.js';
import type { Answer, Refusal } from './semantics-model.js';

export class ModelDivergence extends Error {
  override readonly name = 'ModelDivergence';
}

export type Settled<T> =
  { ok: true; value: T } | { ok: false; code: string; details: Record<string, unknown> };

/** Runs a store call; a catalog error becomes a value, anything else is thrown on. */
export async function settle<T>(call: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    if (isFencegateError(error)) return { ok: false, code: error.code, details: error.details };
    throw error;
  }
}

export function show(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (item instanceof Set ? [...item] : item));
}

export function diverge(what: string, expected: unknown, actual: unknown): never {
  throw new ModelDivergence(`${what}\n  model: ${show(expected)}\n  store: ${show(actual)}`);
}

export function same(what: string, expected: unknown, actual: unknown): void {
  if (!isDeepStrictEqual(expected, actual)) diverge(what, expected, actual);
}

/** The refusal matches when the code is the model's (or one it also accepts) and details agree. */
export function matchesRefusal(
  refusal: Refusal,
  code: string,
  details: Record<string, unknown>,
): boolean {
  if (code !== refusal.code && !(refusal.alsoAccept ?? []).includes(code)) return false;
  return Object.entries(refusal.details).every(([key, value]) =>
    isDeepStrictEqual(details[key], value),
  );
}

/**
 * Compares a settled store call with the model's answer; `project` maps the store's success value
 * to the model's shape. Returns the store's value on success.
 */
export function compareAnswer<T, M>(
  what: string,
  expected: Answer<M>,
  actual: Settled<T>,
  project: (value: T) => M,
): T | null {
  if (expected.ok) {
    if (!actual.ok) diverge(what, expected.value, { error: actual.code, details: actual.details });
    same(what, expected.value, project(actual.value));
    return actual.value;
  }
  if (actual.ok) diverge(what, { error: expected.refusal }, actual.value);
  if (!matchesRefusal(expected.refusal, actual.code, actual.details)) {
    diverge(what, { error: expected.refusal }, { error: actual.code, details: actual.details });
  }
  return null;
}
